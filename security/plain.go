package security

import (
	"crypto/subtle"
	"fmt"
	"strings"
)

// PlainLoginModule is the JAAS login module of SASL/PLAIN.
const PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"

// ScramLoginModule is the JAAS login module of SASL/SCRAM.
const ScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"

// JaasEntry is one login module entry of a sasl.jaas.config value:
// `<module> <flag> key="value" ...;`.
type JaasEntry struct {
	Module  string
	Flag    string
	Options map[string]string
}

// ParseJaasConfig reads a sasl.jaas.config value as Kafka's JaasConfig
// parser does: entries of a module class, a control flag and key=value
// options (values quoted or bare), each ended by a semicolon.
func ParseJaasConfig(s string) ([]JaasEntry, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return nil, fmt.Errorf("sasl.jaas.config: %w", err)
	}
	entries, rest, err := jaasEntries(toks)
	if err != nil {
		return nil, fmt.Errorf("sasl.jaas.config: %w", err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("sasl.jaas.config: unexpected %q: %w", rest[0], ErrConfig)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("sasl.jaas.config has no login module: %w", ErrConfig)
	}
	return entries, nil
}

// jaasEntries reads login module entries up to the end of toks or a '}',
// which it leaves in rest.
func jaasEntries(toks []string) (entries []JaasEntry, rest []string, err error) {
	for len(toks) > 0 && toks[0] != "}" {
		if len(toks) < 2 || isJaasPunct(toks[0]) || isJaasPunct(toks[1]) {
			return nil, nil, fmt.Errorf("expected a login module and a control flag: %w", ErrConfig)
		}
		e := JaasEntry{Module: toks[0], Flag: toks[1], Options: map[string]string{}}
		switch e.Flag {
		case "required", "requisite", "sufficient", "optional":
		default:
			return nil, nil, fmt.Errorf("invalid control flag %s: %w", e.Flag, ErrConfig)
		}
		toks = toks[2:]
		for len(toks) > 0 && toks[0] != ";" {
			if len(toks) < 3 || toks[1] != "=" {
				return nil, nil, fmt.Errorf("expected key=value after %s: %w", e.Module, ErrConfig)
			}
			e.Options[toks[0]] = toks[2]
			toks = toks[3:]
		}
		if len(toks) == 0 {
			return nil, nil, fmt.Errorf("the entry of %s does not end with ';': %w", e.Module, ErrConfig)
		}
		toks = toks[1:]
		entries = append(entries, e)
	}
	return entries, toks, nil
}

func isJaasPunct(tok string) bool { return tok == ";" || tok == "=" || tok == "{" || tok == "}" }

// ParseJaasFile reads a JAAS login configuration file (the file
// java.security.auth.login.config names): login contexts `Name { entries };`,
// with Java's // and /* */ comments. It returns the entries by context name.
func ParseJaasFile(s string) (map[string][]JaasEntry, error) {
	toks, err := jaasTokens(stripJaasComments(s))
	if err != nil {
		return nil, err
	}
	contexts := map[string][]JaasEntry{}
	for len(toks) > 0 {
		if len(toks) < 2 || isJaasPunct(toks[0]) || toks[1] != "{" {
			return nil, fmt.Errorf("expected a login context name and '{': %w", ErrConfig)
		}
		name := toks[0]
		entries, rest, err := jaasEntries(toks[2:])
		if err != nil {
			return nil, fmt.Errorf("login context %s: %w", name, err)
		}
		if len(rest) < 2 || rest[0] != "}" || rest[1] != ";" {
			return nil, fmt.Errorf("login context %s does not end with '};': %w", name, ErrConfig)
		}
		if _, dup := contexts[name]; dup {
			return nil, fmt.Errorf("login context %s is defined twice: %w", name, ErrConfig)
		}
		contexts[name] = entries
		toks = rest[2:]
	}
	return contexts, nil
}

// stripJaasComments blanks out comments outside quoted values.
func stripJaasComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(s)-1)
			b.WriteString(s[i : j+1])
			i = j
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += 2 + end + 1
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// jaasTokens splits a JAAS config into words, quoted strings (their quotes
// removed, backslash escapes kept as the escaped character), '=', ';', '{'
// and '}'.
func jaasTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '=' || c == ';' || c == '{' || c == '}':
			toks = append(toks, string(c))
			i++
		case c == '"':
			var b strings.Builder
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			if i == len(s) {
				return nil, fmt.Errorf("unterminated quoted value: %w", ErrConfig)
			}
			i++
			toks = append(toks, b.String())
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n=;{}\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

// PlainUsers are the user_<name>="<password>" options of a
// PlainLoginModule entry, by name (PlainServerCallbackHandler's users).
func PlainUsers(entries []JaasEntry) map[string]string {
	users := map[string]string{}
	for _, e := range entries {
		if e.Module != PlainLoginModule {
			continue
		}
		for k, v := range e.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = v
			}
		}
	}
	return users
}

type plainServer struct {
	users map[string]string
	user  string
	used  bool
}

// NewPlainServer starts a SASL/PLAIN exchange against users (name to
// password).
func NewPlainServer(users map[string]string) Server { return &plainServer{users: users} }

func (s *plainServer) Username() string { return s.user }

// Evaluate checks "[authzid] NUL authcid NUL passwd" with Kafka's messages.
func (s *plainServer) Evaluate(token []byte) ([]byte, bool, error) {
	if s.used {
		return nil, false, fmt.Errorf("unexpected SASL/PLAIN token after the first: %w", ErrInvalidCredentials)
	}
	s.used = true
	// Kafka splits at up to four NULs and wants exactly three parts.
	toks := strings.SplitN(string(token), "\x00", 5)
	if len(toks) > 4 {
		toks = toks[:4]
	}
	if len(toks) != 3 {
		return nil, false, &AuthenticationError{fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(toks))}
	}
	authz, user, password := toks[0], toks[1], toks[2]
	switch {
	case user == "":
		return nil, false, &AuthenticationError{"Authentication failed: username not specified"}
	case password == "":
		return nil, false, &AuthenticationError{"Authentication failed: password not specified"}
	}
	want, ok := s.users[user]
	if !ok || subtle.ConstantTimeCompare([]byte(password), []byte(want)) != 1 {
		return nil, false, &AuthenticationError{"Authentication failed: Invalid username or password"}
	}
	if authz != "" && authz != user {
		return nil, false, &AuthenticationError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	s.user = user
	return []byte{}, true, nil
}
