package main

// kafka-configs --entity-type users: SCRAM credentials, as Kafka 2.8's
// ConfigCommand handles them. An --add-config key SCRAM-SHA-256 or
// SCRAM-SHA-512 takes "[iterations=N,]password=P" (4096 iterations when
// not given):
//   - with --zookeeper the tool derives the credential itself, with a
//     random salt, and writes it into /config/users/<user> (quota keys may
//     be set in the same command), announced by a change notification;
//   - with --bootstrap-server it sends the salt and salted password in
//     AlterUserScramCredentials, and --describe adds the mechanisms and
//     iterations DescribeUserScramCredentials returns. Quota and SCRAM keys
//     cannot be altered together, nor SCRAM keys of the default user.

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/security"
)

// defaultScramIterations is ConfigCommand.DefaultScramIterations.
const defaultScramIterations = 4096

// The credential patterns of 2.8's ConfigCommand: --bootstrap-server
// also takes iterations=-1 for the default.
var (
	scramZkPattern    = regexp.MustCompile(`^(?:iterations=([0-9]*),)?password=(.*)$`)
	scramAdminPattern = regexp.MustCompile(`^(?:iterations=(-?[0-9]*),)?password=(.*)$`)
)

// isScramKey reports whether a config key names a SCRAM mechanism.
func isScramKey(k string) bool {
	_, ok := security.ScramMechanismNamed(k)
	return ok
}

// scramEnumName is how Java prints Kafka's internal ScramMechanism enum:
// SCRAM_SHA_256.
func scramEnumName(m security.ScramMechanism) string { return strings.ReplaceAll(m.Name, "-", "_") }

// scramPassword reads a SCRAM --add-config value: its iterations (the
// default when not given) and password, refusing fewer iterations than
// Kafka's minimum. 2.8 names the mechanism by its enum name in that message
// with --zookeeper and by its mechanism name with --bootstrap-server.
func scramPassword(m security.ScramMechanism, value string, zkPath bool) (int, string, error) {
	pattern, name := scramAdminPattern, m.Name
	if zkPath {
		pattern, name = scramZkPattern, scramEnumName(m)
	}
	match := pattern.FindStringSubmatch(value)
	if match == nil {
		return 0, "", &usageError{fmt.Sprintf("Invalid credential property %s=%s", scramEnumName(m), value)}
	}
	iterations := defaultScramIterations
	if s := match[1]; strings.HasPrefix(value, "iterations=") && s != "-1" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return 0, "", fmt.Errorf("For input string: \"%s\"", s)
		}
		iterations = int(n)
	}
	if iterations < security.ScramMinIterations {
		return 0, "", &usageError{fmt.Sprintf("Iterations %d is less than the minimum %d required for %s", iterations, security.ScramMinIterations, name)}
	}
	return iterations, match[2], nil
}

// scalaSet and scalaBuffer print names as 2.8's messages do: a Set of the
// added keys, an ArrayBuffer of the deleted ones.
func scalaSet(names []string) string    { return "Set(" + strings.Join(names, ", ") + ")" }
func scalaBuffer(names []string) string { return "ArrayBuffer(" + strings.Join(names, ", ") + ")" }

// splitKeys sorts the command's added and deleted keys into quota keys,
// SCRAM mechanisms and others.
func (c *configCommand) splitKeys() (quotaAdd, scramAdd, otherAdd, quotaDel, scramDel, otherDel []string) {
	for _, k := range c.addOrder {
		switch known, _ := quota.IsQuotaKey(k); {
		case known:
			quotaAdd = append(quotaAdd, k)
		case isScramKey(k):
			scramAdd = append(scramAdd, k)
		default:
			otherAdd = append(otherAdd, k)
		}
	}
	for _, k := range c.del {
		switch known, _ := quota.IsQuotaKey(k); {
		case known:
			quotaDel = append(quotaDel, k)
		case isScramKey(k):
			scramDel = append(scramDel, k)
		default:
			otherDel = append(otherDel, k)
		}
	}
	return
}

// checkAdminUserKeys is 2.8's check of a users, clients or ips --alter
// through the brokers; it reports whether the command alters SCRAM credentials
// rather than quotas.
func (c *configCommand) checkAdminUserKeys() (bool, error) {
	if c.quotaTargets[0].entityType == "ips" {
		var bad []string
		for _, k := range slices.Concat(c.addOrder, c.del) {
			if k != quota.ConnectionCreationRate {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			return false, &usageError{"Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: " + strings.Join(bad, ",")}
		}
		return false, nil
	}
	quotaAdd, scramAdd, otherAdd, quotaDel, scramDel, otherDel := c.splitKeys()
	if c.quotaTargets[0].entityType == "clients" || len(c.quotaTargets) == 2 {
		if bad := append(otherAdd, scramAdd...); len(bad) > 0 {
			return false, &usageError{"Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: " + scalaSet(bad)}
		}
		if bad := append(otherDel, scramDel...); len(bad) > 0 {
			return false, &usageError{"Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: " + scalaBuffer(bad)}
		}
		return false, nil
	}
	switch {
	case len(otherAdd) > 0:
		return false, &usageError{"Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: " + scalaSet(otherAdd)}
	case len(otherDel) > 0:
		return false, &usageError{"Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: " + scalaBuffer(otherDel)}
	case len(scramAdd)+len(scramDel) == 0:
		return false, nil
	case c.quotaTargets[0].match.Name == nil:
		return false, &usageError{"The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server."}
	case len(quotaAdd)+len(quotaDel) > 0:
		return false, &usageError{"Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server."}
	}
	return true, nil
}

// alterScramAdmin is ConfigCommand.alterUserScramCredentialConfigs: the
// deletions, then the upsertions with a fresh salt and the salted password,
// in one AlterUserScramCredentials request.
func (c *configCommand) alterScramAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	user := *c.quotaTargets[0].match.Name
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	_, scramAdd, _, _, scramDel, _ := c.splitKeys()
	for _, k := range scramDel {
		m, _ := security.ScramMechanismNamed(k)
		req.Deletions = append(req.Deletions, kmsg.AlterUserSCRAMCredentialsRequestDeletion{Name: user, Mechanism: m.Type})
	}
	for _, k := range scramAdd {
		m, _ := security.ScramMechanismNamed(k)
		iterations, password, err := scramPassword(m, c.add[k], false)
		if err != nil {
			return err
		}
		salt := security.RandomSalt()
		req.Upsertions = append(req.Upsertions, kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
			Name: user, Mechanism: m.Type, Iterations: int32(iterations),
			Salt: salt, SaltedPassword: m.SaltedPassword(password, salt, iterations),
		})
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Results {
		if err := withMessage(r.ErrorCode, r.ErrorMessage); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Completed updating config for user %s.\n", user)
	return nil
}

// describeScramAdmin is the second half of 2.8's
// describeClientQuotaAndUserScramCredentialConfigs: unless clients or the
// default user are named, the users' credentials (every user's when none
// is named); a user without any is left out.
func (c *configCommand) describeScramAdmin(ctx context.Context, cl *kgo.Client, out io.Writer) error {
	var names []string
	for _, t := range c.quotaTargets {
		switch {
		case t.entityType != "users" || (!t.match.Any && t.match.Name == nil):
			return nil
		case t.match.Name != nil:
			names = append(names, *t.match.Name)
		}
	}
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, n := range names {
		req.Users = append(req.Users, kmsg.DescribeUserSCRAMCredentialsRequestUser{Name: n})
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := withMessage(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return err
	}
	for _, r := range resp.Results {
		if r.ErrorCode == kerr.ResourceNotFound.Code {
			continue
		}
		if err := withMessage(r.ErrorCode, r.ErrorMessage); err != nil {
			class, msg, _ := strings.Cut(strings.TrimPrefix(javaException(err), "org.apache.kafka.common.errors."), ": ")
			fmt.Fprintf(out, "Error retrieving SCRAM credential configs for user-principal '%s': %s: %s\n", r.User, class, msg)
			continue
		}
		infos := make([]string, len(r.CredentialInfos))
		for i, info := range r.CredentialInfos {
			name := "UNKNOWN"
			if m, ok := security.ScramMechanismOfType(info.Mechanism); ok {
				name = m.Name
			}
			infos[i] = fmt.Sprintf("%s=iterations=%d", name, info.Iterations)
		}
		fmt.Fprintf(out, "SCRAM credential configs for user-principal '%s' are %s\n", r.User, strings.Join(infos, ", "))
	}
	return nil
}

// alterUserZooKeeper is 2.8's --zookeeper --alter of a user entity with
// SCRAM keys: each credential derived here with a fresh salt, the quota
// keys checked as AlterClientQuotas checks them, one write. Only a named
// user holds credentials: Kafka validates the default user's config as a
// client's, which has no SCRAM keys.
func (c *configCommand) alterUserZooKeeper(zkc *zkclient.Client, out io.Writer) error {
	t := c.quotaTargets[0]
	_, scramAdd, _, _, scramDel, _ := c.splitKeys()
	if t.match.Name == nil {
		return &usageError{"requirement failed: Unknown Dynamic Configuration: " + scalaSet(append(scramAdd, scramDel...)) + "."}
	}
	creds := map[string]security.ScramCredential{}
	for _, k := range scramAdd {
		m, _ := security.ScramMechanismNamed(k)
		iterations, password, err := scramPassword(m, c.add[k], true)
		if err != nil {
			return err
		}
		creds[k] = m.NewCredential(password, iterations)
	}
	ops, err := c.quotaOps()
	if err != nil {
		return err
	}
	if err := newAdminZk(zkc).AlterUserConfig(*t.match.Name, ops, creds, scramDel); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: %s.\n", zkQuotaEntityLabel(c.quotaTargets))
	return nil
}
