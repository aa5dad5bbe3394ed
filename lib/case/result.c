/* AirlockResult: a finished run, judged, in plain public terms (attempts,
 * flows, controls) over the internal records it keeps for our command. */
#include "config.h"

#include "case/case-state-private.h"
#include "protocol.h"

#include "evidence/event.h"
#include "evidence/sockaddr.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

struct _AirlockResult {
  AirlockArch arch;
  char *case_name;
  AirlockImage *image;
  AirlockVerdict *verdict;
  AirlockRunRecord *record;  /* the run as evidence: events, capture (owned) */
  GPtrArray *pool;          /* strings and arrays the public structs point into */
  GPtrArray *attempts;      /* AirlockAttempt * */
  GPtrArray *flows;         /* AirlockResultFlow * */
  GPtrArray *exchanges;     /* AirlockResultExchange * */
  GPtrArray *controls;      /* AirlockResultControl * */
  GStrv reasons;
  GBytes *out, *err;
  char *bundle_dir;
  char *bundle_error;
  char *host_failure;
  char *lost_attempt;
  char *retry_error;
};

static const char *
keep (AirlockResult *r, char *s)
{
  if (s)
    g_ptr_array_add (r->pool, s);
  return s;
}

static AirlockAttempt *
attempt_of (AirlockResult *r, const AirlockEvent *ev)
{
  AirlockAttempt *a = g_new0 (AirlockAttempt, 1);
  const AirlockSockaddr *dest = airlock_event_get_destination (ev);
  const AirlockVerdictAttempt *j = airlock_verdict_lookup (r->verdict, ev->seq);
  GPtrArray *names = g_ptr_array_new ();

  a->seq = ev->seq;
  a->exe = keep (r, g_strdup (ev->exe));
  a->pid = ev->has_nspid ? ev->nspid : ev->pid;
  a->syscall = keep (r, ev->foreign_abi ? g_strdup_printf ("%s:%s", ev->abi, ev->syscall_name)
                                        : g_strdup (ev->syscall_name));
  if (ev->has_socket)
    {
      a->family = keep (r, airlock_socket_family_to_string ((int) ev->sock_family));
      if (ev->sock_family == AF_INET || ev->sock_family == AF_INET6)
        a->protocol = airlock_inet_protocol_name ((int) ev->sock_protocol, (int) ev->sock_type);
    }
  if (dest)
    {
      char *ip = airlock_sockaddr_inet_address (dest);

      if (ip)
        {
          a->address = keep (r, ip);
          a->port = dest->inet.port;
        }
      else
        a->address = keep (r, airlock_sockaddr_to_string (dest));
    }
  for (guint i = 0; i < ev->dns->len; i++)
    {
      const AirlockDnsQuery *q = ev->dns->pdata[i];

      for (guint k = 0; k < q->questions->len; k++)
        g_ptr_array_add (names, (gpointer) keep (r, g_strdup (((AirlockDnsQuestion *) q->questions->pdata[k])->name)));
    }
  g_ptr_array_add (names, NULL);
  a->dns_names = (const char *const *) names->pdata;
  g_ptr_array_add (r->pool, g_ptr_array_free (names, FALSE));
  a->key = keep (r, airlock_event_key_line (ev));
  a->outcome = keep (r, airlock_event_outcome (ev));
  a->egress = j && j->egress;
  a->admitted = j && j->admitted;
  a->denied = ev->action == AIRLOCK_ACTION_DENY;
  if (dest && r->record->sinkhole && dest->effect == AIRLOCK_SOCKADDR_ADDRESS
      && (dest->family == AF_INET || dest->family == AF_INET6))
    {
      guint8 addr[16];
      int family = AF_INET6;

      /* As the verdict spells it: a v4-mapped destination is the IPv4
       * address on the wire. */
      if (dest->inet.is_v4 || dest->inet.v4_mapped)
        {
          memcpy (addr, dest->inet.v4, 4);
          family = AF_INET;
        }
      else
        memcpy (addr, dest->inet.addr, 16);
      a->host = keep (r, g_strdup (airlock_sinkhole_log_name_for_address (r->record->sinkhole,
                                                                          family, addr)));
    }
  return a;
}

static gboolean
is_exec (const AirlockEvent *ev)
{
  return g_strcmp0 (ev->syscall_name, "execve") == 0 || g_strcmp0 (ev->syscall_name, "execveat") == 0;
}

AirlockResult *
airlock_result_new (AirlockArch arch, const char *case_name, AirlockImage *image,
                    AirlockVerdict *verdict, AirlockRunRecord *record)
{
  AirlockResult *r = g_new0 (AirlockResult, 1);
  GPtrArray *events = record->events;
  AirlockCapture *capture = record->capture;
  GPtrArray *reasons = g_ptr_array_new ();

  r->arch = arch;
  r->case_name = g_strdup (case_name);
  r->image = image;
  r->verdict = verdict;
  r->record = record;
  r->pool = g_ptr_array_new_with_free_func (g_free);
  r->attempts = g_ptr_array_new_with_free_func (g_free);
  r->flows = g_ptr_array_new_with_free_func (g_free);
  r->exchanges = g_ptr_array_new_with_free_func (g_free);
  r->controls = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; events && i < events->len; i++)
    {
      const AirlockEvent *ev = events->pdata[i];

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || ev->phase == AIRLOCK_PHASE_CONTROLS || is_exec (ev))
        continue;
      g_ptr_array_add (r->attempts, attempt_of (r, ev));
    }
  if (capture)
    {
      GPtrArray *flows = airlock_capture_get_flows (capture);

      for (guint i = 0; i < flows->len; i++)
        {
          const AirlockFlow *f = flows->pdata[i];
          AirlockResultFlow *rf = g_new0 (AirlockResultFlow, 1);
          GPtrArray *names = g_ptr_array_new ();
          GPtrArray *lists[3] = { f->dns_names, f->sni, f->http_hosts };

          rf->key = keep (r, g_strdup (f->key));
          rf->address = keep (r, g_strdup (f->address_text));
          rf->port = f->port;
          rf->protocol = airlock_inet_protocol_name (f->protocol, f->type);
          rf->packets = f->packets;
          for (int l = 0; l < 3; l++)
            for (guint k = 0; lists[l] && k < lists[l]->len; k++)
              g_ptr_array_add (names, (gpointer) keep (r, g_strdup (lists[l]->pdata[k])));
          g_ptr_array_add (names, NULL);
          rf->names = (const char *const *) names->pdata;
          g_ptr_array_add (r->pool, g_ptr_array_free (names, FALSE));
          rf->attributed = TRUE;
          for (guint k = 0; k < verdict->unattributed->len; k++)
            if (g_str_equal (verdict->unattributed->pdata[k], f->key))
              rf->attributed = FALSE;
          g_ptr_array_add (r->flows, rf);
        }
    }
  for (guint i = 0; record->sinkhole && i < record->sinkhole->records->len; i++)
    {
      static const char *const kinds[] = { "dns", "tcp", "udp", "icmp" };
      const AirlockSinkholeRecord *s = record->sinkhole->records->pdata[i];
      AirlockResultExchange *x = g_new0 (AirlockResultExchange, 1);
      GPtrArray *answers = g_ptr_array_new ();

      x->kind = kinds[s->kind];
      x->address = keep (r, g_strdup (s->address_text));
      x->port = s->port;
      x->name = keep (r, g_strdup (s->name));
      x->question = keep (r, g_strdup (s->dns.question));
      for (guint k = 0; s->dns.answers && k < s->dns.answers->len; k++)
        g_ptr_array_add (answers, (gpointer) keep (r, g_strdup (s->dns.answers->pdata[k])));
      g_ptr_array_add (answers, NULL);
      x->answers = (const char *const *) answers->pdata;
      g_ptr_array_add (r->pool, g_ptr_array_free (answers, FALSE));
      if (s->kind == AIRLOCK_SINKHOLE_RECORD_TCP)
        x->protocol = airlock_sinkhole_protocol_to_string (s->detected.protocol);
      x->http_method = keep (r, g_strdup (s->detected.http_method));
      x->http_path = keep (r, g_strdup (s->detected.http_path));
      x->http_host = keep (r, g_strdup (s->detected.http_host));
      x->http_user_agent = keep (r, g_strdup (s->detected.http_user_agent));
      x->tls_sni = keep (r, g_strdup (s->detected.tls_sni));
      x->tls_version = keep (r, g_strdup (s->detected.tls_version));
      x->ssh_banner = keep (r, g_strdup (s->detected.ssh_banner));
      x->bytes_in = s->bytes_in;
      x->bytes_out = s->bytes_out;
      x->response = keep (r, g_strdup (s->response));
      g_ptr_array_add (r->exchanges, x);
    }
  for (guint i = 0; i < verdict->controls->len; i++)
    {
      const AirlockControlResult *c = verdict->controls->pdata[i];
      AirlockResultControl *rc = g_new0 (AirlockResultControl, 1);

      rc->name = c->name;
      rc->key = c->key;
      rc->by_supervisor = c->by_supervisor;
      rc->in_capture = c->in_capture;
      g_ptr_array_add (r->controls, rc);
    }
  for (guint i = 0; i < verdict->reasons->len; i++)
    g_ptr_array_add (reasons, g_strdup (verdict->reasons->pdata[i]));
  g_ptr_array_add (reasons, NULL);
  r->reasons = (GStrv) g_ptr_array_free (reasons, FALSE);
  r->out = g_bytes_ref (record->stdout_bytes);
  r->err = g_bytes_ref (record->stderr_bytes);
  return r;
}

void
airlock_result_set_bundle (AirlockResult *result, const char *dir, const char *error)
{
  g_free (result->bundle_dir);
  g_free (result->bundle_error);
  result->bundle_dir = g_strdup (dir);
  result->bundle_error = g_strdup (error);
}

void
airlock_result_free (AirlockResult *r)
{
  if (!r)
    return;
  g_ptr_array_unref (r->attempts);
  g_ptr_array_unref (r->flows);
  g_ptr_array_unref (r->exchanges);
  g_ptr_array_unref (r->controls);
  g_ptr_array_unref (r->pool);
  g_strfreev (r->reasons);
  g_clear_pointer (&r->out, g_bytes_unref);
  g_clear_pointer (&r->err, g_bytes_unref);
  airlock_verdict_free (r->verdict);
  airlock_run_record_unref (r->record);
  airlock_image_free (r->image);
  g_free (r->case_name);
  g_free (r->bundle_dir);
  g_free (r->bundle_error);
  g_free (r->host_failure);
  g_free (r->lost_attempt);
  g_free (r->retry_error);
  g_free (r);
}

AirlockArch
airlock_result_get_arch (AirlockResult *r)
{
  return r->arch;
}

const char *
airlock_result_get_case_name (AirlockResult *r)
{
  return r->case_name;
}

AirlockVerdictKind
airlock_result_get_verdict (AirlockResult *r)
{
  return r->verdict->kind;
}

const char *const *
airlock_result_get_reasons (AirlockResult *r)
{
  return (const char *const *) r->reasons;
}

GPtrArray *
airlock_result_get_attempts (AirlockResult *r)
{
  return r->attempts;
}

GPtrArray *
airlock_result_get_flows (AirlockResult *r)
{
  return r->flows;
}

GPtrArray *
airlock_result_get_exchanges (AirlockResult *r)
{
  return r->exchanges;
}

GPtrArray *
airlock_result_get_controls (AirlockResult *r)
{
  return r->controls;
}

const char *
airlock_result_get_reference (AirlockResult *r)
{
  return r->image ? r->image->reference : NULL;
}

const char *
airlock_result_get_index_digest (AirlockResult *r)
{
  return r->image ? r->image->index_digest : NULL;
}

const char *
airlock_result_get_manifest_digest (AirlockResult *r)
{
  return r->image ? r->image->manifest_digest : NULL;
}

const char *
airlock_result_get_config_digest (AirlockResult *r)
{
  return r->image ? r->image->config_digest : NULL;
}

gboolean
airlock_result_is_complete (AirlockResult *r)
{
  return r->record->complete;
}

const char *
airlock_result_get_incomplete_reason (AirlockResult *r)
{
  return r->record->incomplete_reason;
}

gboolean
airlock_result_get_wait_status (AirlockResult *r, int *ret_status)
{
  const AirlockEvent *exit = r->record->workload_exit;

  /* The workload's own exit, not the controls'. */
  if (!exit || !exit->has_exit_status)
    return FALSE;
  *ret_status = (int) exit->exit_status;
  return TRUE;
}

int
airlock_result_get_exit_code (AirlockResult *r)
{
  int status;

  if (!airlock_result_get_wait_status (r, &status) || !WIFEXITED (status))
    return -1;
  return WEXITSTATUS (status);
}

GBytes *
airlock_result_get_stdout (AirlockResult *r)
{
  return r->out;
}

GBytes *
airlock_result_get_stderr (AirlockResult *r)
{
  return r->err;
}

const char *
airlock_result_get_bundle_dir (AirlockResult *r)
{
  return r->bundle_dir;
}

const char *
airlock_result_get_bundle_error (AirlockResult *r)
{
  return r->bundle_error;
}

const char *
airlock_result_get_accel (AirlockResult *r)
{
  return r->record->accel;
}

const char *
airlock_result_get_hypervisor (AirlockResult *r)
{
  return r->record->uri;
}

void
airlock_result_set_host_failure (AirlockResult *r, const char *failure)
{
  g_free (r->host_failure);
  r->host_failure = g_strdup (failure);
}

const char *
airlock_result_get_host_failure (AirlockResult *r)
{
  return r->host_failure;
}

void
airlock_result_set_lost_attempt (AirlockResult *r, const char *bundle_dir)
{
  g_free (r->lost_attempt);
  r->lost_attempt = g_strdup (bundle_dir);
}

const char *
airlock_result_get_lost_attempt (AirlockResult *r)
{
  return r->lost_attempt;
}

void
airlock_result_set_retry_error (AirlockResult *r, const char *error)
{
  g_free (r->retry_error);
  r->retry_error = g_strdup (error);
}

const char *
airlock_result_get_retry_error (AirlockResult *r)
{
  return r->retry_error;
}

AirlockClock
airlock_result_get_clock (AirlockResult *r)
{
  return r->record->clock_warp ? AIRLOCK_CLOCK_WARP : AIRLOCK_CLOCK_REAL;
}

gint64
airlock_result_get_observed_guest_ms (AirlockResult *r)
{
  return r->record->observed_guest_ms;
}

gint64
airlock_result_get_observed_wall_ms (AirlockResult *r)
{
  return r->record->observed_wall_ms;
}

const AirlockVerdict *
airlock_result_get_verdict_details (AirlockResult *r)
{
  return r->verdict;
}

AirlockCapture *
airlock_result_get_capture (AirlockResult *r)
{
  return r->record->capture;
}

const AirlockRunRecord *
airlock_result_get_record (AirlockResult *r)
{
  return r->record;
}

const AirlockImage *
airlock_result_get_image (AirlockResult *r)
{
  return r->image;
}

char *
airlock_attempt_to_string (const AirlockAttempt *a)
{
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, "%s by %s (pid %u)", a->key ? a->key : a->syscall,
                          a->exe ? a->exe : "?", a->pid);
  if (a->outcome && *a->outcome)
    g_string_append_printf (out, ": %s", a->outcome);
  return g_string_free (out, FALSE);
}
