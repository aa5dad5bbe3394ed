/* `airlock policy suggest`: the policy file (docs/policy.md) that admits
 * exactly the egress attempts some evidence bundles recorded, one rule per
 * kind of attempt, merged over the bundles (both arches of a gate, several
 * gates), each rule under comments naming the arch, the process, the
 * system call, the destination and the DNS and host names it came from.
 *
 * It is built from what the bundle says (airlock_bundle_read(): events.jsonl
 * and the sinkhole's records, network.jsonl), not checked: verify the
 * bundles first.  Public (in <airlock.h>): `airlock policy suggest`. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include "bundle-read.h"

G_BEGIN_DECLS

/* The policy text for @views (AirlockBundleView *, each read with
 * airlock_bundle_read()).  Every rule in it parses (airlock_policy_parse())
 * and, given as the policy of the same runs, admits each workload attempt
 * the bundles recorded, as the verdict judges it:
 *
 *   - a connection (or datagram, or ping) to an address the sinkhole's DNS
 *     handed out for a name: `allow PROTO any port P host=NAME exe=EXE`, and
 *     one such rule for each other name its connections asked for (a TLS
 *     SNI, an HTTP Host): the verdict judges it under every one;
 *   - a DNS query: `allow udp RESOLVER port 53 dns=NAME exe=EXE` (no dns=
 *     when one query asks for several names: a rule takes one);
 *   - anything else to an address: `allow PROTO ADDRESS port P exe=EXE`.
 *
 * A clause that cannot be written (an executable path with blanks, a name
 * that is not a plain host name) is left out, which admits more, and the
 * rule's comment says so.  What no policy can admit is listed in comments
 * at the end and admitted by no rule: a call the supervisor denied (an
 * escape), a destination that does not decode, a flow no record explains.
 * Loopback is not egress and gets no rule.  Transfer full; never NULL. */
AIRLOCK_PUBLIC char *airlock_policy_suggest (GPtrArray *views);

G_END_DECLS
