package adminzk

// SCRAM credentials in /config/users/<sanitized user>, beside the user's
// quotas, as Kafka 2.8's ZkAdminManager alters and describes them
// (AlterUserScramCredentials, DescribeUserScramCredentials) and as its
// ConfigCommand writes them with --zookeeper. The stored value of a
// mechanism's key is security.ScramCredential.String.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/zkpaths"
)

// ErrInvalidScramCredential: a SCRAM credential alteration or description
// is refused (empty user, unknown mechanism, iterations out of bounds,
// duplicate, missing credential).
var ErrInvalidScramCredential = errors.New("invalid SCRAM credential request")

// ScramMaxIterations is the most iterations AlterUserScramCredentials
// accepts (ZkAdminManager's maxIterations); the least is
// security.ScramMinIterations.
const ScramMaxIterations = 16384

// ScramUpsertion sets a user's credential for a mechanism (its
// AlterUserScramCredentials type number) from the salt and salted password
// the client computed.
type ScramUpsertion struct {
	User           string
	Mechanism      int8
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramDeletion removes a user's credential for a mechanism.
type ScramDeletion struct {
	User      string
	Mechanism int8
}

// ScramUserResult is the outcome for one user of AlterUserScramCredentials
// or DescribeUserScramCredentials: Err an *Error with its Kafka code, or nil.
type ScramUserResult struct {
	User string
	Err  error
	// Credentials are the mechanisms and iterations a described user has,
	// in Kafka's mechanism order.
	Credentials []ScramCredentialInfo
}

// ScramCredentialInfo is one credential as DescribeUserScramCredentials
// shows it: no salt or keys, only the mechanism and its iterations.
type ScramCredentialInfo struct {
	Mechanism  int8
	Iterations int32
}

// AlterUserScramCredentials applies deletions and upsertions as Kafka
// 2.8's ZkAdminManager.alterUserScramCredentials, with one result per user
// in the order users first appear (deletions, then upsertions). A user fails
// as a whole:
//   - an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty";
//   - an unknown mechanism: UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM
//     mechanism";
//   - iterations outside 4096–16384: UNACCEPTABLE_CREDENTIAL "Too few
//     iterations" or "Too many iterations";
//   - the same mechanism twice: DUPLICATE_RESOURCE;
//   - deleting a credential the user does not have: RESOURCE_NOT_FOUND;
//   - an empty salted password (Java's HMAC refuses an empty key):
//     UNKNOWN_SERVER_ERROR.
//
// Kafka's message for a user with several illegal alterations is that of
// its last illegal upsertion, else of its last illegal deletion. Each other
// user's config is changed in one conditional write with a change
// notification, which keeps its quota keys.
func (c *Client) AlterUserScramCredentials(upsertions []ScramUpsertion, deletions []ScramDeletion) []ScramUserResult {
	var order []string
	errs := map[string]error{}
	seen := func(user string) {
		if !slices.Contains(order, user) {
			order = append(order, user)
		}
	}
	refuse := func(code *kerr.Error, msg string) error {
		return adminErr(ErrInvalidScramCredential, code, "%s", msg)
	}
	unknown := refuse(kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
	emptyUser := refuse(kerr.UnacceptableCredential, "Username must not be empty")
	for _, d := range deletions {
		seen(d.User)
		if _, ok := security.ScramMechanismOfType(d.Mechanism); d.User == "" {
			errs[d.User] = emptyUser
		} else if !ok {
			errs[d.User] = unknown
		}
	}
	upsertErrs := map[string]error{}
	for _, u := range upsertions {
		seen(u.User)
		_, ok := security.ScramMechanismOfType(u.Mechanism)
		switch {
		case u.User == "":
			upsertErrs[u.User] = emptyUser
		case !ok:
			upsertErrs[u.User] = unknown
		case u.Iterations < security.ScramMinIterations:
			upsertErrs[u.User] = refuse(kerr.UnacceptableCredential, "Too few iterations")
		case u.Iterations > ScramMaxIterations:
			upsertErrs[u.User] = refuse(kerr.UnacceptableCredential, "Too many iterations")
		}
	}
	for u, err := range upsertErrs {
		errs[u] = err
	}
	// The same (user, mechanism) twice among the legal alterations.
	pairs := map[ScramDeletion]int{}
	for _, d := range deletions {
		pairs[d]++
	}
	for _, u := range upsertions {
		pairs[ScramDeletion{User: u.User, Mechanism: u.Mechanism}]++
	}
	for p, n := range pairs {
		if _, bad := errs[p.User]; !bad && n > 1 {
			errs[p.User] = refuse(kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
		}
	}
	results := make([]ScramUserResult, 0, len(order))
	for _, user := range order {
		err, bad := errs[user]
		if !bad {
			err = c.alterUserScram(user, upsertions, deletions)
		}
		results = append(results, ScramUserResult{User: user, Err: err})
	}
	return results
}

// alterUserScram writes one user's deletions, then upsertions.
func (c *Client) alterUserScram(user string, upsertions []ScramUpsertion, deletions []ScramDeletion) error {
	creds := map[string]string{}
	for _, u := range upsertions {
		if u.User != user {
			continue
		}
		m, _ := security.ScramMechanismOfType(u.Mechanism)
		if len(u.SaltedPassword) == 0 {
			c.log.Info("Error encountered while altering user SCRAM credentials: an empty salted password")
			return adminErr(ErrInvalidScramCredential, kerr.UnknownServerError, "%s", kerr.UnknownServerError.Description)
		}
		creds[m.Name] = m.CredentialFromSaltedPassword(u.Salt, u.SaltedPassword, int(u.Iterations)).String()
	}
	return c.ChangeEntityConfig(zkpaths.EntityUsers, quota.Sanitize(user), func(cfg map[string]string) (bool, error) {
		for _, d := range deletions {
			if d.User != user {
				continue
			}
			m, _ := security.ScramMechanismOfType(d.Mechanism)
			if _, ok := cfg[m.Name]; !ok {
				return false, adminErr(ErrInvalidScramCredential, kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
			}
			delete(cfg, m.Name)
		}
		for k, v := range creds {
			cfg[k] = v
		}
		return true, nil
	})
}

// DescribeUserScramCredentials describes the named users' credentials, or
// with none named every user that has one, as Kafka 2.8's
// ZkAdminManager.describeUserScramCredentials:
//   - every user, sorted by name, when users is empty (an error reading
//     /config/users is returned, the request's top-level error);
//   - else one result per distinct name, in the request's order: an empty
//     name is RESOURCE_NOT_FOUND "Username must not be empty", a name given
//     twice DUPLICATE_RESOURCE, a user without credentials
//     RESOURCE_NOT_FOUND.
//
// A stored credential that does not parse fails its user with
// UNKNOWN_SERVER_ERROR. Kafka names the users it lists by their znode
// (sanitized) names; we list them by name, which differs only for names
// that need escaping.
func (c *Client) DescribeUserScramCredentials(users []string) ([]ScramUserResult, error) {
	if len(users) == 0 {
		names, err := c.children(zkpaths.Config + "/" + zkpaths.EntityUsers)
		if err != nil {
			return nil, err
		}
		var out []ScramUserResult
		for _, name := range names {
			if name == zkpaths.DefaultEntity {
				continue
			}
			user, err := quota.Desanitize(name)
			if err != nil {
				continue
			}
			cfg, err := c.FetchEntityConfig(zkpaths.EntityUsers, name)
			if err != nil {
				return nil, err
			}
			if r, ok := scramDescription(user, cfg); ok {
				out = append(out, r)
			}
		}
		slices.SortFunc(out, func(a, b ScramUserResult) int { return strings.Compare(a.User, b.User) })
		return out, nil
	}
	count := map[string]int{}
	for _, u := range users {
		count[u]++
	}
	var out []ScramUserResult
	for _, user := range users {
		if slices.ContainsFunc(out, func(r ScramUserResult) bool { return r.User == user }) {
			continue
		}
		r := ScramUserResult{User: user}
		switch {
		case user == "":
			r.Err = adminErr(ErrInvalidScramCredential, kerr.ResourceNotFound, "Username must not be empty")
		case count[user] > 1:
			r.Err = adminErr(ErrInvalidScramCredential, kerr.DuplicateResource, "Cannot describe SCRAM credentials for the same user twice in a single request: %s", user)
		default:
			cfg, err := c.FetchEntityConfig(zkpaths.EntityUsers, quota.Sanitize(user))
			if err != nil {
				r.Err = err
				break
			}
			var ok bool
			if r, ok = scramDescription(user, cfg); !ok {
				r.Err = adminErr(ErrInvalidScramCredential, kerr.ResourceNotFound, "Attempt to describe a user credential that does not exist: %s", user)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// scramDescription is a user's credentials from its config; false when it
// has none.
func scramDescription(user string, cfg map[string]string) (ScramUserResult, bool) {
	r := ScramUserResult{User: user}
	for _, m := range security.ScramMechanisms {
		v, ok := cfg[m.Name]
		if !ok {
			continue
		}
		cred, err := security.ParseScramCredential(v)
		if err != nil {
			return ScramUserResult{User: user, Err: adminErr(ErrInvalidScramCredential, kerr.UnknownServerError, "%s", kerr.UnknownServerError.Description)}, true
		}
		r.Credentials = append(r.Credentials, ScramCredentialInfo{Mechanism: m.Type, Iterations: int32(cred.Iterations)})
	}
	return r, len(r.Credentials) > 0
}

// AlterUserConfig is kafka-configs --zookeeper's change of a user's
// config: quota ops as AlterClientQuotas checks them, SCRAM credentials set
// (by mechanism name) and keys removed, in one change of
// /config/users/<user> with its notification.
func (c *Client) AlterUserConfig(user string, ops []QuotaOp, credentials map[string]security.ScramCredential, remove []string) error {
	e := QuotaEntity{HasUser: true, User: &user}
	props, err := quotaProps(e, ops)
	if err != nil {
		return err
	}
	entityType, name := e.ConfigPath()
	return c.ChangeEntityConfig(entityType, name, func(cfg map[string]string) (bool, error) {
		for _, k := range remove {
			delete(cfg, k)
		}
		for _, op := range ops {
			if op.Remove {
				delete(cfg, op.Key)
			} else {
				cfg[op.Key] = props[op.Key]
			}
		}
		for m, cred := range credentials {
			if _, ok := security.ScramMechanismNamed(m); !ok {
				return false, fmt.Errorf("%q is not a SCRAM mechanism: %w", m, ErrInvalidScramCredential)
			}
			cfg[m] = cred.String()
		}
		return true, nil
	})
}

// LoggableConfig is an entity's config as a log line may show it: a user's
// SCRAM credentials are [hidden], as Kafka logs sensitive configs.
func LoggableConfig(cfg map[string]string) map[string]string {
	out := maps.Clone(cfg)
	for k := range out {
		if _, ok := security.ScramMechanismNamed(k); ok {
			out[k] = "[hidden]"
		}
	}
	return out
}
