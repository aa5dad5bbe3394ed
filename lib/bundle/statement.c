/* attestation.intoto.json: an in-toto Statement v1 whose subject is the
 * image manifest the run was bound to and whose predicate is a runtime
 * trace (in-toto attestation spec, predicates/runtime-trace.md, v0.2):
 *
 *   monitor           airlock and its version; the trace policy (the
 *                     allow-list, the controls) with policy.txt's digest
 *   monitoredProcess  the guest of this arch; event = the run's chain head,
 *                     which names this exact evidence stream
 *   monitorLog        process: every execve the supervisor recorded;
 *                     network: every egress attempt of the workload (ip,
 *                     hostname — a query's DNS question, or the name the
 *                     sinkhole handed the address out for — port,
 *                     protocol, invoking process) and every denial
 *   metadata          start and end of the run
 *
 * Extension fields carry airlock's own verdict.  Pure: the writer and
 * `airlock verify` produce the same bytes from the same facts. */
#include "config.h"

#include "bundle/bundle.h"
#include "json-util-private.h"
#include "protocol.h"

#include "evidence/sockaddr.h"

#include <json-glib/json-glib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <string.h>

static void
invoking_process (JsonBuilder *b, const AirlockEvent *ev)
{
  json_builder_set_member_name (b, "invokingProcess");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "pid");
  json_builder_add_int_value (b, ev->has_nspid ? ev->nspid : ev->pid);
  airlock_json_set_str (b, "processBinary", ev->exe);
  json_builder_set_member_name (b, "arguments");
  json_builder_begin_array (b);
  for (guint i = 0; ev->argv && ev->argv[i]; i++)
    json_builder_add_string_value (b, ev->argv[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
}

/* The name the sinkhole's DNS handed @sa's address out for, or NULL: the
 * host a connection to one of its addresses was made for. */
static const char *
sinkhole_name (const AirlockSinkholeLog *sinkhole, const AirlockSockaddr *sa)
{
  if (!sinkhole)
    return NULL;
  /* As the address goes out: a v4-mapped IPv6 address is its IPv4. */
  if (sa->inet.is_v4 || sa->inet.v4_mapped)
    return airlock_sinkhole_log_name_for_address (sinkhole, AF_INET, sa->inet.v4);
  return airlock_sinkhole_log_name_for_address (sinkhole, AF_INET6, sa->inet.addr);
}

static void
network_entry (JsonBuilder *b, const AirlockBundleFacts *facts, const AirlockEvent *ev,
               const AirlockVerdictAttempt *j)
{
  const AirlockSockaddr *sa = airlock_event_get_destination (ev);
  g_autofree char *key = airlock_event_key_line (ev);
  g_autofree char *outcome = airlock_event_outcome (ev);
  const char *hostname = NULL;

  /* A query's hostname is its question; a connection's, the name its
   * address was handed out for. */
  for (guint d = 0; !hostname && d < ev->dns->len; d++)
    {
      const AirlockDnsQuery *q = ev->dns->pdata[d];

      if (q->questions->len)
        hostname = ((AirlockDnsQuestion *) q->questions->pdata[0])->name;
    }
  json_builder_begin_object (b);
  if (sa && sa->effect == AIRLOCK_SOCKADDR_ADDRESS
      && (sa->family == AF_INET || sa->family == AF_INET6))
    {
      g_autofree char *ip = airlock_sockaddr_inet_address (sa);

      airlock_json_set_str (b, "ip", ip);
      if (sa->inet.port)
        {
          json_builder_set_member_name (b, "port");
          json_builder_add_int_value (b, sa->inet.port);
        }
      if (!hostname)
        hostname = sinkhole_name (facts->sinkhole, sa);
    }
  if (hostname)
    airlock_json_set_str (b, "hostname", hostname);
  if (airlock_inet_protocol_name ((int) ev->sock_protocol, (int) ev->sock_type))
    airlock_json_set_str (b, "protocol", airlock_inet_protocol_name ((int) ev->sock_protocol, (int) ev->sock_type));
  invoking_process (b, ev);
  airlock_json_set_str (b, "syscall", ev->syscall_name);
  airlock_json_set_str (b, "airlockKey", key);
  airlock_json_set_str (b, "airlockOutcome", outcome);
  airlock_json_set_str (b, "airlockPolicy", j->denied ? "denied" : j->admitted ? "admitted" : "not-admitted");
  json_builder_set_member_name (b, "airlockSeq");
  json_builder_add_int_value (b, (gint64) ev->seq);
  json_builder_end_object (b);
}

char *
airlock_bundle_statement_json (const AirlockBundleFacts *facts)
{
  const AirlockVerdict *v = facts->verdict;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *event = g_strdup_printf ("urn:airlock:run:%s:chain:%s",
                                            airlock_arch_to_string (facts->arch),
                                            facts->chain_head ? facts->chain_head : "none");
  g_autofree char *host = g_strdup_printf ("urn:airlock:guest:%s:%s",
                                           airlock_arch_to_string (facts->arch),
                                           facts->accel ? facts->accel : "unknown");
  g_autofree char *policy_sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256,
                                                               facts->policy_text ? facts->policy_text : "", -1);

  json_builder_begin_object (b);
  airlock_json_set_str (b, "_type", AIRLOCK_STATEMENT_TYPE);
  json_builder_set_member_name (b, "subject");
  json_builder_begin_array (b);
  if (facts->manifest_digest && g_str_has_prefix (facts->manifest_digest, "sha256:"))
    {
      json_builder_begin_object (b);
      airlock_json_set_str (b, "name", facts->reference);
      json_builder_set_member_name (b, "digest");
      json_builder_begin_object (b);
      airlock_json_set_str (b, "sha256", facts->manifest_digest + strlen ("sha256:"));
      json_builder_end_object (b);
      if (facts->index_digest)
        {
          json_builder_set_member_name (b, "annotations");
          json_builder_begin_object (b);
          airlock_json_set_str (b, "airlock.index", facts->index_digest);
          airlock_json_set_str (b, "airlock.config", facts->config_digest);
          airlock_json_set_str (b, "airlock.arch", airlock_arch_to_string (facts->arch));
          json_builder_end_object (b);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  airlock_json_set_str (b, "predicateType", AIRLOCK_RUNTIME_TRACE_TYPE);

  json_builder_set_member_name (b, "predicate");
  json_builder_begin_object (b);

  json_builder_set_member_name (b, "monitor");
  json_builder_begin_object (b);
  {
    g_autofree char *type = g_strdup_printf ("urn:airlock:monitor:supervisor/%s", facts->airlock_version);

    airlock_json_set_str (b, "type", type);
    /* What recorded the calls: the seccomp supervisor alone, or with the
     * kernel-hook recorder (absent in evidence from before it was said). */
    if (facts->recorder)
      airlock_json_set_str (b, "recorder", facts->recorder);
  }
  json_builder_set_member_name (b, "configSource");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "name", "policy.txt");
  json_builder_set_member_name (b, "digest");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "sha256", policy_sha);
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "tracePolicy");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "allow", facts->policy_text ? facts->policy_text : "");
  json_builder_set_member_name (b, "negativeControls");
  json_builder_add_int_value (b, v->controls->len);
  json_builder_end_object (b);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "monitoredProcess");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "hostID", host);
  airlock_json_set_str (b, "type", "urn:airlock:image-entrypoint/v1");
  airlock_json_set_str (b, "event", event);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "monitorLog");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "process");
  json_builder_begin_array (b);
  for (guint i = 0; facts->events && i < facts->events->len; i++)
    {
      const AirlockEvent *ev = facts->events->pdata[i];

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || ev->phase == AIRLOCK_PHASE_CONTROLS || !ev->path)
        continue;
      json_builder_begin_object (b);
      airlock_json_set_str (b, "eventType", "process");
      airlock_json_set_str (b, "processBinary", ev->path);
      json_builder_set_member_name (b, "arguments");
      json_builder_begin_array (b);
      for (guint k = 0; ev->exec_argv && ev->exec_argv[k]; k++)
        json_builder_add_string_value (b, ev->exec_argv[k]);
      json_builder_end_array (b);
      invoking_process (b, ev);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "network");
  json_builder_begin_array (b);
  for (guint i = 0; facts->events && i < facts->events->len; i++)
    {
      const AirlockEvent *ev = facts->events->pdata[i];
      const AirlockVerdictAttempt *j;

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || ev->phase == AIRLOCK_PHASE_CONTROLS)
        continue;
      j = airlock_verdict_lookup (v, ev->seq);
      if (j)
        network_entry (b, facts, ev, j);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "metadata");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "buildStartedOn", facts->started);
  airlock_json_set_str (b, "buildFinishedOn", facts->finished);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "airlock");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "version", facts->airlock_version);
  airlock_json_set_str (b, "arch", airlock_arch_to_string (facts->arch));
  airlock_json_set_str (b, "verdict", airlock_verdict_kind_to_string (v->kind));
  json_builder_set_member_name (b, "reasons");
  json_builder_begin_array (b);
  for (guint i = 0; i < v->reasons->len; i++)
    json_builder_add_string_value (b, v->reasons->pdata[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "controlsObserved");
  json_builder_add_int_value (b, v->n_controls_ok);
  json_builder_set_member_name (b, "unattributedFlows");
  json_builder_add_int_value (b, v->n_unattributed);
  airlock_json_set_str (b, "chainHead", facts->chain_head);
  airlock_json_set_str (b, "evidenceSha256", facts->evidence_sha256);
  json_builder_end_object (b);

  json_builder_end_object (b);
  json_builder_end_object (b);

  return airlock_json_builder_to_text (b, TRUE);
}
