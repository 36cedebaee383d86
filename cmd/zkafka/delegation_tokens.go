package main

// zkafka delegation-tokens is Kafka 2.8's kafka-delegation-tokens.sh
// (DelegationTokenCommand): --create, --renew, --expire or --describe a
// delegation token through an admin client whose --command-config carries
// the SASL settings, since brokers refuse token requests on unauthenticated
// connections: security.protocol, sasl.mechanism (PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512) and sasl.jaas.config's username and password, with the
// ssl.truststore.* of a SASL_SSL listener.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

const delegationTokensMessage = "This tool helps to create, renew, expire, or describe delegation tokens."

var delegationTokensOptions = []optionSpec{
	argOpt("bootstrap-server", "", "REQUIRED: server(s) to use for bootstrapping."),
	argOpt("command-config", "", "REQUIRED: A property file containing configs to be passed to Admin Client. Token management"+
		" operations are allowed in secure mode only. This config file is used to pass security related configs."),
	flagOpt("create", "Create a new delegation token. Use --renewer-principal option to pass renewers principals."),
	flagOpt("renew", "Renew delegation token. Use --renew-time-period option to set renew time period."),
	flagOpt("expire", "Expire delegation token. Use --expiry-time-period option to expire the token."),
	flagOpt("describe", "Describe delegation tokens for the given principals. Use --owner-principal to pass owner/renewer principals."+
		" If --owner-principal option is not supplied, all the user owned tokens and tokens where user have Describe permission will be returned."),
	argOpt("owner-principal", "", "owner is a kafka principal. It is should be in principalType:name format.").optional(),
	argOpt("renewer-principal", "", "renewer is a kafka principal. It is should be in principalType:name format.").optional(),
	argOpt("max-life-time-period", "", "Max life period for the token in milliseconds. If the value is -1,"+
		" then token max life time will default to a server side config value (delegation.token.max.lifetime.ms).").typed("Long").optional(),
	argOpt("renew-time-period", "", "Renew time period in milliseconds. If the value is -1, then the"+
		" renew time period will default to a server side config value (delegation.token.expiry.time.ms).").typed("Long").optional(),
	argOpt("expiry-time-period", "", "Expiry time period in milliseconds. If the value is -1, then the"+
		" token will get invalidated immediately.").typed("Long").optional(),
	argOpt("hmac", "", "HMAC of the delegation token").optional(),
	helpOption,
}

func runDelegationTokens(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, delegationTokensOptions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if helpNeeded(args, opts, delegationTokensMessage, delegationTokensOptions, stderr) {
		return 1
	}
	err = delegationTokenCommand(opts, stdout)
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		printUsage(stderr, ue.msg, delegationTokensOptions)
	default:
		fmt.Fprintf(stdout, "Error while executing delegation token command : %s\n", javaException(err))
	}
	return 1
}

// checkDelegationTokenArgs is DelegationTokenCommandOptions.checkArgs, after
// main's one-action check.
func checkDelegationTokenArgs(o toolOptions) error {
	if o.count("create", "renew", "expire", "describe") != 1 {
		return usageErrorf("Command must include exactly one action: --create, --renew, --expire or --describe")
	}
	required := [][]string{{"bootstrap-server", "command-config"}}
	switch {
	case o.has("create"):
		required = append(required, []string{"max-life-time-period"})
	case o.has("renew"):
		required = append(required, []string{"hmac", "renew-time-period"})
	case o.has("expire"):
		required = append(required, []string{"hmac", "expiry-time-period"})
	}
	for _, r := range required {
		if err := o.checkRequired(r...); err != nil {
			return err
		}
	}
	for _, c := range [][]string{
		{"create", "hmac", "renew-time-period", "expiry-time-period", "owner-principal"},
		{"renew", "renewer-principal", "max-life-time-period", "expiry-time-period", "owner-principal"},
		{"expire", "renew", "max-life-time-period", "renew-time-period", "owner-principal"},
		{"describe", "renew-time-period", "max-life-time-period", "hmac", "renew-time-period", "expiry-time-period"},
	} {
		if err := o.checkInvalid(c[0], c[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// int64Option reads a Long option with joptsimple's conversion message.
func (o toolOptions) int64Option(name string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(o.value(name)), 10, 64)
	if err != nil {
		return 0, usageErrorf("Cannot parse argument '%s' of option %s", o.value(name), name)
	}
	return v, nil
}

// principalsOption is getPrincipals: the principals of a repeated option.
func principalsOption(o toolOptions, name string) ([]kafka.Principal, error) {
	var out []kafka.Principal
	for _, v := range o.all(name) {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		p, err := kafka.ParsePrincipal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// principalList is a Java list's toString: "[User:a, User:b]".
func principalList(ps []kafka.Principal) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// tokenDate is SimpleDateFormat("yyyy-MM-dd'T'HH:mm") in the local zone.
func tokenDate(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02T15:04") }

func delegationTokenCommand(o toolOptions, out io.Writer) error {
	if err := checkDelegationTokenArgs(o); err != nil {
		return err
	}
	var periods = map[string]int64{}
	for _, name := range []string{"max-life-time-period", "renew-time-period", "expiry-time-period"} {
		if o.has(name) {
			v, err := o.int64Option(name)
			if err != nil {
				return err
			}
			periods[name] = v
		}
	}
	cl, _, err := dialAdmin(o.value("bootstrap-server"), o.value("command-config"))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	switch {
	case o.has("create"):
		return createDelegationToken(ctx, cl, o, periods["max-life-time-period"], out)
	case o.has("renew"), o.has("expire"):
		return changeDelegationToken(ctx, cl, o, periods, out)
	}
	return describeDelegationTokens(ctx, cl, o, out)
}

// tokenRow is one token as printToken shows it.
type tokenRow struct {
	id, hmac, owner, renewers string
	issue, expiry, max        int64
}

func printTokens(out io.Writer, rows []tokenRow) {
	const format = "\n%-15s %-30s %-15s %-25s %-15s %-15s %-15s"
	fmt.Fprintf(out, format, "TOKENID", "HMAC", "OWNER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE")
	for _, r := range rows {
		fmt.Fprintf(out, format, r.id, r.hmac, r.owner, r.renewers, tokenDate(r.issue), tokenDate(r.expiry), tokenDate(r.max))
		fmt.Fprintln(out)
	}
}

func createDelegationToken(ctx context.Context, cl *kgo.Client, o toolOptions, maxLife int64, out io.Writer) error {
	renewers, err := principalsOption(o, "renewer-principal")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Calling create token operation with renewers :%s , max-life-time-period :%d\n", principalList(renewers), maxLife)
	req := kmsg.NewPtrCreateDelegationTokenRequest()
	req.MaxLifetimeMillis = maxLife
	for _, p := range renewers {
		req.Renewers = append(req.Renewers, kmsg.CreateDelegationTokenRequestRenewer{PrincipalType: p.Type, PrincipalName: p.Name})
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Created delegation token with tokenId : %s", resp.TokenID)
	printTokens(out, []tokenRow{{resp.TokenID, base64.StdEncoding.EncodeToString(resp.HMAC), resp.PrincipalType + ":" + resp.PrincipalName,
		principalList(renewers), resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp}})
	return nil
}

func changeDelegationToken(ctx context.Context, cl *kgo.Client, o toolOptions, periods map[string]int64, out io.Writer) error {
	h := o.value("hmac")
	mac, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return fmt.Errorf("Illegal base64 character in hmac: %w", err)
	}
	var code int16
	var expiry int64
	if o.has("renew") {
		fmt.Fprintf(out, "Calling renew token operation with hmac :%s , renew-time-period :%d\n", h, periods["renew-time-period"])
		req := kmsg.NewPtrRenewDelegationTokenRequest()
		req.HMAC, req.RenewTimeMillis = mac, periods["renew-time-period"]
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		code, expiry = resp.ErrorCode, resp.ExpiryTimestamp
	} else {
		fmt.Fprintf(out, "Calling expire token operation with hmac :%s , expire-time-period : %d\n", h, periods["expiry-time-period"])
		req := kmsg.NewPtrExpireDelegationTokenRequest()
		req.HMAC, req.ExpiryPeriodMillis = mac, periods["expiry-time-period"]
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		code, expiry = resp.ErrorCode, resp.ExpiryTimestamp
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return err
	}
	op := "expire"
	if o.has("renew") {
		op = "renew"
	}
	fmt.Fprintf(out, "Completed %s operation. New expiry date : %s\n", op, tokenDate(expiry))
	return nil
}

func describeDelegationTokens(ctx context.Context, cl *kgo.Client, o toolOptions, out io.Writer) error {
	req := kmsg.NewPtrDescribeDelegationTokenRequest()
	if o.has("owner-principal") {
		owners, err := principalsOption(o, "owner-principal")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Calling describe token operation for owners :%s\n", principalList(owners))
		req.Owners = []kmsg.DescribeDelegationTokenRequestOwner{}
		for _, p := range owners {
			req.Owners = append(req.Owners, kmsg.DescribeDelegationTokenRequestOwner{PrincipalType: p.Type, PrincipalName: p.Name})
		}
	} else {
		fmt.Fprintln(out, "Calling describe token operation for current user.")
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return err
	}
	rows := make([]tokenRow, 0, len(resp.TokenDetails))
	for _, d := range resp.TokenDetails {
		renewers := make([]kafka.Principal, len(d.Renewers))
		for i, r := range d.Renewers {
			renewers[i] = kafka.Principal{Type: r.PrincipalType, Name: r.PrincipalName}
		}
		rows = append(rows, tokenRow{d.TokenID, base64.StdEncoding.EncodeToString(d.HMAC), d.PrincipalType + ":" + d.PrincipalName,
			principalList(renewers), d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp})
	}
	fmt.Fprintf(out, "Total number of tokens : %d", len(rows))
	printTokens(out, rows)
	return nil
}
