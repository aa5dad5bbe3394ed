#include "config.h"

#include "gate/verdict.h"

#include "evidence/frame-private.h"
#include "evidence/sockaddr.h"
#include "sinkhole/sinkhole.h"
#include "probe-controls.h"
#include "protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static void
control_result_free (gpointer data)
{
  AirlockControlResult *c = data;

  g_free (c->key);
  g_free (c);
}

void
airlock_verdict_free (AirlockVerdict *verdict)
{
  if (!verdict)
    return;
  g_ptr_array_unref (verdict->reasons);
  g_ptr_array_unref (verdict->controls);
  g_array_unref (verdict->judged);
  g_ptr_array_unref (verdict->unattributed);
  g_free (verdict->observation);
  g_free (verdict);
}

static void G_GNUC_PRINTF (3, 4)
add_reason (AirlockVerdict *v, AirlockVerdictKind kind, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  g_ptr_array_add (v->reasons, g_strdup_vprintf (fmt, ap));
  va_end (ap);
  /* Inconclusive outranks fail: without whole evidence nothing else holds.
   * A reason of kind pass is a finding shown with the verdict that changes
   * nothing. */
  if (kind == AIRLOCK_VERDICT_INCONCLUSIVE || v->kind == AIRLOCK_VERDICT_PASS)
    v->kind = kind;
}

/* The protocol a socket of (family, type, protocol) speaks, as the capture
 * names it: protocol 0 on a stream or datagram inet socket is TCP or UDP. */
static int
socket_protocol (const AirlockEvent *ev)
{
  int type = (int) ev->sock_type & 0xf;

  if (ev->sock_protocol != 0)
    return (int) ev->sock_protocol;
  return type == SOCK_STREAM ? IPPROTO_TCP : type == SOCK_DGRAM ? IPPROTO_UDP : 0;
}

/* Where an inet call sends: the address it passes, or the connected peer.
 * NULL for anything that is not an inet destination. */
static const AirlockSockaddr *
inet_destination (const AirlockEvent *ev)
{
  const AirlockSockaddr *sa = airlock_event_get_destination (ev);

  if (!sa || sa->effect != AIRLOCK_SOCKADDR_ADDRESS)
    return NULL;
  if (sa->family != AF_INET && sa->family != AF_INET6)
    return NULL;
  if (g_strcmp0 (ev->syscall_name, "bind") == 0)
    return NULL;   /* a local address */
  return sa;
}

/* The bytes and family a packet to @sa carries: IPv4 for AF_INET and for a
 * v4-mapped IPv6 address (the kernel sends those over IPv4). */
static int
wire_address (const AirlockSockaddr *sa, guint8 out[16])
{
  if (sa->inet.is_v4 || sa->inet.v4_mapped)
    {
      memcpy (out, sa->inet.v4, 4);
      return AF_INET;
    }
  memcpy (out, sa->inet.addr, 16);
  return AF_INET6;
}

static gboolean
is_loopback (int family, const guint8 *a)
{
  static const guint8 v6_loopback[16] = { [15] = 1 };

  return family == AF_INET ? a[0] == 127 : memcmp (a, v6_loopback, 16) == 0;
}

/* The capture's key for what the record sends: the same spelling as
 * airlock_capture_flow_key(), with v4-mapped addresses as the IPv4 they go
 * out as and no scope id (a packet carries none). */
static char *
record_flow_key (const AirlockEvent *ev, const AirlockSockaddr *sa)
{
  guint8 a[16];
  int family = wire_address (sa, a);

  return airlock_capture_flow_key (family, socket_protocol (ev), a, sa->inet.port);
}

static GPtrArray *
dns_names (const AirlockEvent *ev)
{
  GPtrArray *names = g_ptr_array_new ();

  for (guint i = 0; ev->dns && i < ev->dns->len; i++)
    {
      const AirlockDnsQuery *q = ev->dns->pdata[i];

      for (guint j = 0; q->questions && j < q->questions->len; j++)
        g_ptr_array_add (names, ((AirlockDnsQuestion *) q->questions->pdata[j])->name);
    }
  g_ptr_array_add (names, NULL);
  return names;
}

/* ---- the sinkhole's records, by flow ---- */

/* A name a connection itself said it wanted. */
typedef struct {
  const char *what;        /* "SNI" or "Host" (static) */
  char *name;              /* as sent, a Host without its port */
} Claim;

static void
claim_free (gpointer data)
{
  Claim *c = data;

  g_free (c->name);
  g_free (c);
}

/* What the sinkhole recorded of one destination, keyed like a capture
 * flow, so that records, flows and the sinkhole meet on one key. */
typedef struct {
  char *key;
  int protocol;
  guint64 n;               /* connections, datagrams or echo requests */
  /* The name the address was handed out for (borrowed from the log), or
   * NULL. */
  const char *name;
} SinkholeFlow;

static void
sinkhole_flow_free (gpointer data)
{
  SinkholeFlow *f = data;

  g_free (f->key);
  g_free (f);
}

typedef struct {
  GHashTable *by_key;      /* key → SinkholeFlow * (owned by @flows) */
  GPtrArray *flows;        /* SinkholeFlow *, in order of their first record */
  GHashTable *claims;      /* key → GPtrArray of Claim *: SNI and Host per flow */
} SinkholeFlows;

static void
sinkhole_flows_clear (SinkholeFlows *sf)
{
  g_clear_pointer (&sf->by_key, g_hash_table_unref);
  g_clear_pointer (&sf->flows, g_ptr_array_unref);
  g_clear_pointer (&sf->claims, g_hash_table_unref);
}

static void
add_claim (SinkholeFlows *sf, const char *key, const char *what, const char *name)
{
  GPtrArray *claims;
  g_autofree char *bare = NULL;
  Claim *c;

  if (!name || !*name)
    return;
  bare = g_str_equal (what, "Host") ? airlock_sinkhole_host_without_port (name) : g_strdup (name);
  claims = g_hash_table_lookup (sf->claims, key);
  if (!claims)
    {
      claims = g_ptr_array_new_with_free_func (claim_free);
      g_hash_table_insert (sf->claims, g_strdup (key), claims);
    }
  for (guint i = 0; i < claims->len; i++)
    {
      const Claim *other = claims->pdata[i];

      if (g_str_equal (other->what, what) && airlock_policy_same_name (other->name, bare))
        return;
    }
  c = g_new0 (Claim, 1);
  c->what = what;
  c->name = g_steal_pointer (&bare);
  g_ptr_array_add (claims, c);
}

/* The sinkhole's records by flow, and every SNI and HTTP Host a
 * connection sent, from the sinkhole's records and from the capture (two
 * host-side readings of the same bytes: either one is enough to judge). */
static void
sinkhole_flows_init (SinkholeFlows *sf, const AirlockRunRecord *in)
{
  const AirlockSinkholeLog *log = in->sinkhole;

  sf->flows = g_ptr_array_new_with_free_func (sinkhole_flow_free);
  sf->by_key = g_hash_table_new (g_str_hash, g_str_equal);
  sf->claims = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                      (GDestroyNotify) g_ptr_array_unref);

  for (guint i = 0; log && i < log->records->len; i++)
    {
      const AirlockSinkholeRecord *r = log->records->pdata[i];
      int protocol;
      guint16 port = r->port;
      g_autofree char *key = NULL;
      SinkholeFlow *f;

      if (r->family != AF_INET && r->family != AF_INET6)
        continue;
      switch (r->kind)
        {
        case AIRLOCK_SINKHOLE_RECORD_TCP:
          protocol = IPPROTO_TCP;
          break;
        case AIRLOCK_SINKHOLE_RECORD_UDP:
          protocol = IPPROTO_UDP;
          break;
        case AIRLOCK_SINKHOLE_RECORD_DNS:
          protocol = g_strcmp0 (r->dns_transport, "tcp") == 0 ? IPPROTO_TCP : IPPROTO_UDP;
          break;
        case AIRLOCK_SINKHOLE_RECORD_ICMP:
          protocol = r->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
          port = 0;
          break;
        default:
          continue;
        }
      key = airlock_capture_flow_key (r->family, protocol, r->address, port);
      f = g_hash_table_lookup (sf->by_key, key);
      if (!f)
        {
          f = g_new0 (SinkholeFlow, 1);
          f->key = g_strdup (key);
          f->protocol = protocol;
          f->name = airlock_sinkhole_log_name_for_address (log, r->family, r->address);
          g_ptr_array_add (sf->flows, f);
          g_hash_table_insert (sf->by_key, f->key, f);
        }
      /* A query over TCP is also a TCP record: one connection, not two. */
      if (!(r->kind == AIRLOCK_SINKHOLE_RECORD_DNS && protocol == IPPROTO_TCP))
        f->n++;
      if (r->kind == AIRLOCK_SINKHOLE_RECORD_TCP)
        {
          add_claim (sf, key, "SNI", r->detected.tls_sni);
          add_claim (sf, key, "Host", r->detected.http_host);
        }
    }

  if (in->capture)
    {
      GPtrArray *flows = airlock_capture_get_flows (in->capture);

      for (guint i = 0; i < flows->len; i++)
        {
          const AirlockFlow *f = flows->pdata[i];

          for (guint j = 0; f->sni && j < f->sni->len; j++)
            add_claim (sf, f->key, "SNI", f->sni->pdata[j]);
          for (guint j = 0; f->http_hosts && j < f->http_hosts->len; j++)
            add_claim (sf, f->key, "Host", f->http_hosts->pdata[j]);
        }
    }
}

/* A name for a reason: without its trailing dot, and escaped when it holds
 * a byte a reason must not (the sinkhole escapes what it writes; a record
 * file is read, not trusted to be printable). */
static char *
display_name (const char *name)
{
  gsize len = strlen (name);

  if (len > 1 && name[len - 1] == '.')
    len--;
  for (gsize i = 0; i < len; i++)
    if ((guchar) name[i] < 0x20 || (guchar) name[i] >= 0x7f)
      return airlock_evidence_escape_bytes ((const guint8 *) name, len);
  return g_strndup (name, len);
}

/* " (pypi.org, SNI pypi.org)": the name the destination's address was
 * handed out for and what its connections asked for; "" when none. */
static char *
names_text (const char *name, const GPtrArray *claims)
{
  GString *out = g_string_new (NULL);

  if (name)
    {
      g_autofree char *shown = display_name (name);

      g_string_append (out, shown);
    }
  for (guint i = 0; claims && i < claims->len; i++)
    {
      const Claim *c = claims->pdata[i];
      g_autofree char *shown = display_name (c->name);

      g_string_append_printf (out, "%s%s %s", out->len ? ", " : "", c->what, shown);
    }
  if (out->len)
    {
      g_string_prepend (out, " (");
      g_string_append_c (out, ')');
    }
  return g_string_free (out, FALSE);
}

/* The record as people read it, with what the sinkhole knows of its
 * destination in @names (names_text(), may be ""). */
static char *
describe_named (const AirlockEvent *ev, const char *names)
{
  g_autofree char *line = airlock_event_key_line (ev);

  return g_strdup_printf ("%s%s by %s (pid %u)", line ? line : "?", names ? names : "",
                          ev->exe ? ev->exe : "?", ev->has_nspid ? ev->nspid : ev->pid);
}

static char *
describe (const AirlockEvent *ev)
{
  return describe_named (ev, NULL);
}

/* Each control must be seen by the supervisor and in the capture, and a
 * datagram control, when the sinkhole's records are whole, taken in by the
 * sinkhole: its destination is recorded there like any other. */
static void
check_controls (AirlockVerdict *v, const AirlockRunRecord *in, GHashTable *control_keys,
                SinkholeFlows *sf, gboolean sinkhole_whole)
{
  for (gsize i = 0; i < PROBE_N_CONTROLS; i++)
    {
      const struct probe_control *pc = &probe_controls[i];
      AirlockControlResult *c = g_new0 (AirlockControlResult, 1);
      const AirlockFlow *flow;
      guint8 a[16] = { 0 };

      inet_pton (pc->family, pc->address, a);
      c->name = pc->name;
      c->key = airlock_capture_flow_key (pc->family, pc->protocol, a, pc->port);
      c->by_supervisor = g_hash_table_contains (control_keys, c->key);
      flow = in->capture ? airlock_capture_lookup_flow (in->capture, c->key) : NULL;
      c->in_capture = flow && (pc->protocol == IPPROTO_TCP ? flow->syns > 0 : flow->datagrams > 0);
      /* Datagram controls only: the sinkhole takes a datagram in whatever
       * the guest does next, but a TCP connection only once its handshake
       * completes, and under the warped clock the guest's own timers may
       * give up on it first (its SYN is still in the capture the sinkhole
       * wrote, which in_capture holds). */
      c->sinkhole_judged = sinkhole_whole && pc->protocol != IPPROTO_TCP;
      c->by_sinkhole = c->sinkhole_judged && g_hash_table_lookup (sf->by_key, c->key) != NULL;
      if (c->by_supervisor && c->in_capture && (!c->sinkhole_judged || c->by_sinkhole))
        v->n_controls_ok++;
      else if (c->by_supervisor && c->in_capture)
        add_reason (v, AIRLOCK_VERDICT_FAIL,
                    "negative control %s (%s) was not taken in by the sinkhole: the network "
                    "did not see what the supervisor and the capture did", pc->name, c->key);
      else
        add_reason (v, AIRLOCK_VERDICT_FAIL,
                    "negative control %s (%s) was not seen by %s: the detector was blind",
                    pc->name, c->key,
                    !c->by_supervisor && !c->in_capture ? "the supervisor nor the capture"
                    : !c->by_supervisor ? "the supervisor" : "the capture");
      g_ptr_array_add (v->controls, c);
    }
}

/* "250 ms", "30 s", "30.4 s", "12.5 min", "6 h", "2.1 h": a duration a
 * person reads at a glance, to a tenth of its unit. */
static char *
duration_to_string (guint64 ms)
{
  double value;
  const char *unit;
  g_autofree char *text = NULL;

  if (ms < 1000)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " ms", ms);
  if (ms < 120 * 1000)
    value = (double) ms / 1000.0, unit = "s";
  else if (ms < 3600 * 1000)
    value = (double) ms / 60000.0, unit = "min";
  else
    value = (double) ms / 3600000.0, unit = "h";
  text = g_strdup_printf ("%.1f", value);
  if (g_str_has_suffix (text, ".0"))
    text[strlen (text) - 2] = '\0';
  return g_strdup_printf ("%s %s", text, unit);
}

/* "6 h of guest time in 41 s", "30 s of guest time", or NULL when the
 * record does not say how long the workload was watched. */
static char *
observed_span (const AirlockRunRecord *in)
{
  g_autofree char *guest = NULL;
  g_autofree char *wall = NULL;

  if (in->observed_guest_ms < 0)
    return NULL;
  guest = duration_to_string ((guint64) in->observed_guest_ms);
  if (in->observed_wall_ms < 0)
    return g_strdup_printf ("%s of guest time", guest);
  wall = duration_to_string ((guint64) in->observed_wall_ms);
  return g_strdup_printf ("%s of guest time in %s", guest, wall);
}

/* Did the image run, and was the whole of its run watched?  A pass needs a
 * trailer that ended the run normally (completed, or the time limit), the
 * workload started, and its entrypoint's execve seen to succeed: without
 * them a gate would pass an image it never ran (issue 19: an /etc/passwd
 * the supervisor cannot read, an entrypoint that does not exist). */
static void
check_run (AirlockVerdict *v, const AirlockRunRecord *in)
{
  const AirlockEvent *exec = in->workload_exec;

  if (!in->complete)
    return;   /* said already: without the whole channel nothing below is known */
  if (!in->has_trailer)
    {
      add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "the evidence has no trailer: the run's end "
                  "was not recorded");
      return;
    }
  /* A send or connect the kprobe recorder saw and could not record (its
   * ring was full) went ahead, or a connect's outcome found the ring full:
   * the records are not the whole of what was done. */
  if (in->trailer.has_records_lost && in->trailer.records_lost > 0)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "the recorder lost %" G_GUINT64_FORMAT
                " record(s) of sends, connects or their outcomes (its ring was full): they are "
                "not in the evidence", in->trailer.records_lost);
  switch (in->trailer.end_reason)
    {
    case AIRLOCK_END_COMPLETED:
      break;
    case AIRLOCK_END_TIMEOUT:
      v->ended_by_time_limit = TRUE;
      break;
    case AIRLOCK_END_WALL_LIMIT:
      /* Only the host stops a workload by the wall's time, and only when
       * it warped the guest's clock. */
      if (!in->clock_warp)
        {
          add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                      "the trailer says the host's wall-time limit ended the run, but the guest's "
                      "clock was not warped: the host sends no stop then");
          return;
        }
      v->ended_by_time_limit = TRUE;
      break;
    case AIRLOCK_END_ERROR:
      {
        const char *why = airlock_run_record_last_log (in);

        if (!in->workload_start)
          add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "the workload never started: %s",
                      why ? why : "a trusted guest program failed and gave no reason");
        else
          add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                      "a trusted guest program failed during the run, so it was not watched "
                      "to its end: %s", why ? why : "no reason given");
        return;
      }
    default:
      add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                  "the run ended for a reason airlock does not know (end reason %u)",
                  in->trailer.end_reason);
      return;
    }

  if (!in->workload_start)
    {
      add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                  "the workload never started: the evidence has no start of the workload phase");
      return;
    }
  if (!exec)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                "the entrypoint was not seen to start: the evidence has no record of its execve");
  else if (!exec->has_result)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "the entrypoint was not seen to start: %s",
                exec->note ? exec->note : "its execve's outcome is not recorded");
  else if (exec->result != 0)
    {
      g_autofree char *err = airlock_result_to_string (exec->result);

      add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                  "the entrypoint could not be executed: %s: %s%s%s",
                  exec->path ? exec->path : "?", err, exec->note ? " — " : "",
                  exec->note ? exec->note : "");
    }

  if (v->ended_by_time_limit)
    {
      gboolean wall = in->trailer.end_reason == AIRLOCK_END_WALL_LIMIT;
      guint32 limit_ms = in->clock_warp && !wall ? in->guest_time_ms : in->timeout_ms;
      g_autofree char *span = observed_span (in);
      g_autofree char *limit = limit_ms ? duration_to_string (limit_ms) : NULL;
      g_autofree char *which = g_strdup_printf ("%s%s%s%s",
                                                wall ? "the wall-time limit"
                                                : in->clock_warp ? "the guest-time limit"
                                                : "the time limit",
                                                limit ? " (" : "", limit ? limit : "",
                                                limit ? ")" : "");

      v->observation = span ? g_strdup_printf ("observed %s; ended by %s: what the workload "
                                               "would do later was not seen", span, which)
                            : g_strdup_printf ("ended by %s: what the workload would do later "
                                               "was not seen", which);
    }
  else if (in->workload_exit && in->workload_exit->has_exit_status)
    {
      g_autofree char *status = airlock_wait_status_to_string (in->workload_exit->exit_status);
      g_autofree char *span = observed_span (in);

      v->observation = span ? g_strdup_printf ("observed until the workload ended (%s), %s",
                                               status, span)
                            : g_strdup_printf ("observed until the workload ended (%s)", status);
    }
}

/* Judges one egress attempt under every name its destination has: the
 * name the sinkhole handed its address out for (what `host=` matches), and
 * each TLS SNI and HTTP Host its connections sent.  A workload that
 * resolves allowed.org and then asks that address for evil.org must not
 * pass on host=allowed.org: the connection is admitted only when the
 * policy admits it under each of those names.  A name that differs but is
 * admitted too (a rule without host=) is noted, once per flow.  Neither
 * witness says which connect a connection came from (the supervisor does
 * not see the source port), so every connection to the same address and
 * port counts for each connect there: a name one of them sent can only
 * make the others' judgment stricter, never looser. */
static void
judge_egress (AirlockVerdict *v, const AirlockRunRecord *in, const AirlockPolicy *policy,
              SinkholeFlows *sf, GHashTable *noted, const AirlockEvent *ev,
              const AirlockSockaddr *sa, int family, const guint8 *a)
{
  g_autoptr (GPtrArray) names = dns_names (ev);
  g_autofree char *key = record_flow_key (ev, sa);
  g_autofree char *shown = NULL;
  g_autofree char *what = NULL;
  g_autofree char *host_shown = NULL;
  g_autofree char *claim_shown = NULL;
  const char *host = in->sinkhole ? airlock_sinkhole_log_name_for_address (in->sinkhole, family, a)
                                  : NULL;
  GPtrArray *claims = g_hash_table_lookup (sf->claims, key);
  const Claim *refused = NULL, *differs = NULL;
  AirlockPolicyAttempt attempt = {
    .family = family, .protocol = socket_protocol (ev), .address = a, .port = sa->inet.port,
    .dns_names = (const char *const *) names->pdata, .exe = ev->exe, .host = host,
  };
  AirlockVerdictAttempt j = { .seq = ev->seq, .egress = TRUE };

  j.admitted = policy && airlock_policy_admits_attempt (policy, &attempt, NULL);
  for (guint i = 0; claims && i < claims->len; i++)
    {
      const Claim *c = claims->pdata[i];

      if (host && airlock_policy_same_name (c->name, host))
        continue;
      if (host && !differs)
        differs = c;
      attempt.host = c->name;
      if (j.admitted && !airlock_policy_admits_attempt (policy, &attempt, NULL))
        {
          j.admitted = FALSE;
          refused = c;
        }
    }
  g_array_append_val (v->judged, j);

  shown = names_text (host, claims);
  what = describe_named (ev, shown);
  host_shown = host ? display_name (host) : NULL;
  if (j.admitted)
    {
      v->n_admitted++;
      if (differs && !g_hash_table_contains (noted, key))
        {
          claim_shown = display_name (differs->name);
          add_reason (v, AIRLOCK_VERDICT_PASS,
                      "noted, not judged: %s asked for %s '%s' at the address handed out for "
                      "'%s'; the policy admits it under each of its names",
                      what, differs->what, claim_shown, host_shown);
          g_hash_table_add (noted, g_steal_pointer (&key));
        }
    }
  else if (refused && host)
    {
      claim_shown = display_name (refused->name);
      add_reason (v, AIRLOCK_VERDICT_FAIL,
                  "egress not admitted by the policy: %s: it asked for %s '%s' at the address "
                  "handed out for '%s', and no rule admits it under that name",
                  what, refused->what, claim_shown, host_shown);
    }
  else if (refused)
    {
      claim_shown = display_name (refused->name);
      add_reason (v, AIRLOCK_VERDICT_FAIL,
                  "egress not admitted by the policy: %s: it asked for %s '%s', and no rule "
                  "admits it under that name", what, refused->what, claim_shown);
    }
  else
    add_reason (v, AIRLOCK_VERDICT_FAIL, "egress not admitted by the policy: %s", what);
}

/* The other way round from the unattributed-egress rule: what the
 * supervisor saw leave, the sinkhole must have taken in.  Only what the
 * supervisor saw succeed (a connect that returned 0 — the handshake was
 * made with the sinkhole's stack, so its listener holds the connection; a
 * datagram sent) and what the capture saw reach the NIC: a connect still
 * in progress may be abandoned before the sinkhole accepts it, and traffic
 * to the guest's own addresses (loopback, 0.0.0.0, its interface's) never
 * leaves the guest, whatever its address looks like. */
static void
check_sinkhole_saw (AirlockVerdict *v, const AirlockRunRecord *in, SinkholeFlows *sf,
                    GHashTable *missing, const AirlockEvent *ev, const AirlockSockaddr *sa)
{
  int protocol = socket_protocol (ev);
  gboolean connected, sent;
  g_autofree char *key = NULL;
  g_autofree char *what = NULL;
  const AirlockFlow *wire;

  if (ev->action == AIRLOCK_ACTION_DENY || !ev->has_result)
    return;
  connected = protocol == IPPROTO_TCP && g_strcmp0 (ev->syscall_name, "connect") == 0
              && ev->result == 0;
  sent = protocol == IPPROTO_UDP && g_strcmp0 (ev->syscall_name, "connect") != 0
         && ev->result >= 0;
  if (!connected && !sent)
    return;
  key = record_flow_key (ev, sa);
  if (g_hash_table_contains (sf->by_key, key) || g_hash_table_contains (missing, key))
    return;
  wire = airlock_capture_lookup_flow (in->capture, key);
  if (!wire || (connected ? wire->syns == 0 : wire->datagrams == 0))
    return;

  what = describe (ev);
  if (connected)
    /* The guest's only way out is the sinkhole: a connection made there
     * and not recorded is one whose bytes nobody host-side judged. */
    add_reason (v, AIRLOCK_VERDICT_FAIL,
                "connection missing from the sinkhole's records: %s was established and its "
                "SYN is in the capture, but the sinkhole recorded no connection to %s: what it "
                "sent was not seen host-side", what, key);
  else
    /* A datagram can be lost inside the host (a full socket buffer): its
     * absence makes the records partial, not the workload guilty. */
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                "datagram missing from the sinkhole's records: %s was sent and is in the "
                "capture, but the sinkhole recorded no datagram to %s: its records are not "
                "whole", what, key);
  g_hash_table_add (missing, g_steal_pointer (&key));
}

/* Whether the sinkhole's records, when it served the run, can be judged
 * at all, like the capture: read, ended by the process's final line, and
 * nothing dropped.  FALSE when anything is missing (the cross-check from
 * the supervisor's side is then not made: a record not there proves
 * nothing). */
static gboolean
check_sinkhole_whole (AirlockVerdict *v, const AirlockRunRecord *in)
{
  const AirlockSinkholeLog *log = in->sinkhole;

  if (!in->sinkhole_served)
    return FALSE;   /* no sinkhole network: nothing to hold the records against */
  if (!log)
    {
      add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "%s: what the guest's network saw cannot "
                  "be judged", in->sinkhole_error ? in->sinkhole_error
                                                  : "the sinkhole's records did not read");
      return FALSE;
    }
  if (!log->complete)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "the sinkhole's records are incomplete: %s",
                log->incomplete_reason ? log->incomplete_reason : "no reason given");
  if (log->frames_refused > 0)
    /* Only a workload writing frames past its kernel sends under another
     * source MAC: evasion, refused by the sinkhole and failed here. */
    add_reason (v, AIRLOCK_VERDICT_FAIL,
                "the guest sent %" G_GUINT64_FORMAT " frame(s) under a source MAC that is not "
                "its NIC's (refused by the sinkhole): %s", log->frames_refused,
                log->first_refused ? log->first_refused : "no description");
  if (log->records_dropped > 0)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                "the sinkhole's records are not whole: %" G_GUINT64_FORMAT " record(s) past its "
                "limit of %d were dropped", log->records_dropped, AIRLOCK_SINKHOLE_RECORDS_MAX);
  return log->complete && log->records_dropped == 0;
}

AirlockVerdict *
airlock_verdict_compute (const AirlockRunRecord *in, const AirlockPolicy *policy)
{
  AirlockVerdict *v = g_new0 (AirlockVerdict, 1);
  g_autoptr (GHashTable) record_keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) control_keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) noted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) missing = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) reported = g_hash_table_new (g_str_hash, g_str_equal);
  SinkholeFlows sf = { 0 };
  gboolean sinkhole_whole;

  v->kind = AIRLOCK_VERDICT_PASS;
  v->clock_warp = in->clock_warp;
  v->observed_guest_ms = in->observed_guest_ms;
  v->observed_wall_ms = in->observed_wall_ms;
  v->reasons = g_ptr_array_new_with_free_func (g_free);
  v->controls = g_ptr_array_new_with_free_func (control_result_free);
  v->judged = g_array_new (FALSE, TRUE, sizeof (AirlockVerdictAttempt));
  v->unattributed = g_ptr_array_new_with_free_func (g_free);

  if (!in->complete)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "the evidence is incomplete: %s",
                in->incomplete_reason ? in->incomplete_reason : "no reason given");
  check_run (v, in);
  if (!in->capture)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE, "there is no packet capture to check against%s%s",
                in->capture_error ? ": " : "", in->capture_error ? in->capture_error : "");
  sinkhole_whole = check_sinkhole_whole (v, in) && in->capture;
  sinkhole_flows_init (&sf, in);
  if (!in->controls_ran)
    add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                "the negative controls did not run: nothing proves the detector could see");
  else if (in->controls_exec && in->controls_exec->has_result && in->controls_exec->result != 0)
    {
      g_autofree char *err = airlock_result_to_string (in->controls_exec->result);

      /* airlock's own probe, not the image: a broken guest image, which
       * proves nothing either way about the workload. */
      add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                  "the negative controls' probe could not be executed: %s: %s",
                  in->controls_exec->path ? in->controls_exec->path : "?", err);
    }

  for (guint i = 0; i < in->events->len; i++)
    {
      const AirlockEvent *ev = in->events->pdata[i];
      const AirlockSockaddr *sa;
      guint8 a[16];
      int family;

      if (ev->kind != AIRLOCK_EVENT_SYSCALL)
        continue;
      /* Every record that names an inet destination explains flows to it,
       * whichever phase made it. */
      sa = inet_destination (ev);
      if (sa)
        {
          char *key = record_flow_key (ev, sa);

          if (ev->phase == AIRLOCK_PHASE_CONTROLS)
            g_hash_table_add (control_keys, g_strdup (key));
          g_hash_table_add (record_keys, key);
          if (sinkhole_whole)
            check_sinkhole_saw (v, in, &sf, missing, ev, sa);
        }
      if (ev->phase == AIRLOCK_PHASE_CONTROLS)
        continue;

      if (ev->action == AIRLOCK_ACTION_DENY && ev->reason != AIRLOCK_DENY_CLONE3)
        {
          g_autofree char *what = describe (ev);
          AirlockVerdictAttempt j = { .seq = ev->seq, .denied = TRUE };

          g_array_append_val (v->judged, j);
          /* clone3 is not an escape: it is denied whatever its flags, and
           * every glibc thread start tries it before clone. */
          v->n_denied++;
          add_reason (v, AIRLOCK_VERDICT_FAIL, "denied (%s): %s",
                      airlock_deny_reason_to_string (ev->reason), what);
          continue;
        }
      if (!sa || ev->action == AIRLOCK_ACTION_DENY)
        continue;
      family = wire_address (sa, a);
      if (is_loopback (family, a))
        continue;   /* stays in the guest */
      v->n_attempts++;
      judge_egress (v, in, policy, &sf, noted, ev, sa, family, a);
    }

  if (in->controls_ran)
    check_controls (v, in, control_keys, &sf, sinkhole_whole);

  /* Every captured frame is judged (lib/net/flows.h): one that is neither
   * the guest's egress, nor QEMU's own, nor the guest kernel's housekeeping
   * for its own addresses needs a compromised guest kernel or a spoofer —
   * what the capture exists to catch.  A cap reached means frames went
   * unjudged: nothing can be said of them. */
  if (in->capture)
    {
      GPtrArray *anomalies = airlock_capture_get_anomalies (in->capture);

      for (guint i = 0; i < anomalies->len; i++)
        {
          const AirlockCaptureAnomaly *an = anomalies->pdata[i];

          if (an->kind == AIRLOCK_CAPTURE_ANOMALY_LIMIT)
            add_reason (v, AIRLOCK_VERDICT_INCONCLUSIVE,
                        "the capture was not judged whole: %s", an->first_reason);
          else
            add_reason (v, AIRLOCK_VERDICT_FAIL,
                        "capture anomaly (%s, %" G_GUINT64_FORMAT " frame(s)): %s",
                        airlock_capture_anomaly_kind_to_string (an->kind), an->count,
                        an->first_reason);
        }
    }

  /* What left the guest's NIC and no record explains. */
  if (in->capture)
    {
      GPtrArray *flows = airlock_capture_get_flows (in->capture);

      for (guint i = 0; i < flows->len; i++)
        {
          const AirlockFlow *f = flows->pdata[i];
          const SinkholeFlow *sink;
          g_autofree char *names = NULL;

          if (g_hash_table_contains (record_keys, f->key))
            continue;
          sink = g_hash_table_lookup (sf.by_key, f->key);
          names = names_text (sink ? sink->name : NULL, g_hash_table_lookup (sf.claims, f->key));
          v->n_unattributed++;
          g_ptr_array_add (v->unattributed, g_strdup (f->key));
          g_hash_table_add (reported, f->key);
          add_reason (v, AIRLOCK_VERDICT_FAIL,
                      "unattributed egress %s%s: %" G_GUINT64_FORMAT " packet(s) left the guest "
                      "that no supervisor record explains",
                      f->key, names, f->packets);
        }
    }

  /* What the sinkhole took in and no record explains: the same rule with
   * the sinkhole as the witness (a flow both saw is reported once). */
  for (guint i = 0; i < sf.flows->len; i++)
    {
      const SinkholeFlow *f = sf.flows->pdata[i];
      g_autofree char *names = NULL;
      guint64 n = MAX (f->n, 1);

      if (g_hash_table_contains (record_keys, f->key) || g_hash_table_contains (reported, f->key))
        continue;
      names = names_text (f->name, g_hash_table_lookup (sf.claims, f->key));
      v->n_unattributed++;
      g_ptr_array_add (v->unattributed, g_strdup (f->key));
      if (f->protocol == IPPROTO_TCP)
        add_reason (v, AIRLOCK_VERDICT_FAIL,
                    "unattributed egress %s%s: the sinkhole accepted %" G_GUINT64_FORMAT
                    " connection(s) that no supervisor record explains", f->key, names, n);
      else if (f->protocol == IPPROTO_UDP)
        add_reason (v, AIRLOCK_VERDICT_FAIL,
                    "unattributed egress %s%s: the sinkhole received %" G_GUINT64_FORMAT
                    " datagram(s) that no supervisor record explains", f->key, names, n);
      else
        add_reason (v, AIRLOCK_VERDICT_FAIL,
                    "unattributed egress %s%s: the sinkhole answered %" G_GUINT64_FORMAT
                    " echo request(s) that no supervisor record explains", f->key, names, n);
    }
  sinkhole_flows_clear (&sf);
  return v;
}

const AirlockVerdictAttempt *
airlock_verdict_lookup (const AirlockVerdict *verdict, guint64 seq)
{
  guint low = 0, high = verdict->judged->len;

  /* Records are judged in frame order, so seq increases: a flood of
   * records stays cheap to look up. */
  while (low < high)
    {
      guint mid = low + (high - low) / 2;
      const AirlockVerdictAttempt *j = &g_array_index (verdict->judged, AirlockVerdictAttempt, mid);

      if (j->seq == seq)
        return j;
      if (j->seq < seq)
        low = mid + 1;
      else
        high = mid;
    }
  return NULL;
}
