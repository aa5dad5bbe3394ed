#include "config.h"

#include "gate/verdict.h"

#include "evidence/frame-private.h"
#include "evidence/sockaddr.h"
#include "probe-controls.h"
#include "protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

const char *
airlock_verdict_kind_to_string (AirlockVerdictKind kind)
{
  switch (kind)
    {
    case AIRLOCK_VERDICT_PASS:
      return "pass";
    case AIRLOCK_VERDICT_FAIL:
      return "fail";
    case AIRLOCK_VERDICT_INCONCLUSIVE:
      return "inconclusive";
    }
  return "unknown";
}

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
  /* Inconclusive outranks fail: without whole evidence nothing else holds. */
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

static char *
describe (const AirlockEvent *ev)
{
  g_autofree char *line = airlock_event_key_line (ev);

  return g_strdup_printf ("%s by %s (pid %u)", line ? line : "?", ev->exe ? ev->exe : "?",
                          ev->has_nspid ? ev->nspid : ev->pid);
}

static void
check_controls (AirlockVerdict *v, const AirlockRunRecord *in, GHashTable *control_keys)
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
      if (c->by_supervisor && c->in_capture)
        v->n_controls_ok++;
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

AirlockVerdict *
airlock_verdict_compute (const AirlockRunRecord *in, const AirlockPolicy *policy)
{
  AirlockVerdict *v = g_new0 (AirlockVerdict, 1);
  g_autoptr (GHashTable) record_keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) control_keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

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
      {
        g_autoptr (GPtrArray) names = dns_names (ev);
        const char *rule = NULL;
        AirlockVerdictAttempt j = { .seq = ev->seq, .egress = TRUE };

        j.admitted = policy && airlock_policy_admits (policy, family, socket_protocol (ev),
                                                      a, sa->inet.port,
                                                      (const char *const *) names->pdata,
                                                      ev->exe, &rule);
        g_array_append_val (v->judged, j);
        if (j.admitted)
          v->n_admitted++;
        else
          {
            g_autofree char *what = describe (ev);

            add_reason (v, AIRLOCK_VERDICT_FAIL, "egress not admitted by the policy: %s", what);
          }
      }
    }

  if (in->controls_ran)
    check_controls (v, in, control_keys);

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

          if (g_hash_table_contains (record_keys, f->key))
            continue;
          v->n_unattributed++;
          g_ptr_array_add (v->unattributed, g_strdup (f->key));
          add_reason (v, AIRLOCK_VERDICT_FAIL,
                      "unattributed egress %s: %" G_GUINT64_FORMAT " packet(s) left the guest that "
                      "no supervisor record explains",
                      f->key, f->packets);
        }
    }
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
