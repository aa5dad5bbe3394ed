/* The bundle's derived files, each a pure function of AirlockBundleFacts:
 * the writer makes them from a live run and `airlock verify` makes them
 * again from the bundle and compares bytes, so nothing here may depend on
 * anything but its arguments (no clock, no hash-table order). */
#include "config.h"

#include "bundle/bundle.h"
#include "json-util-private.h"
#include "bundle/bundle-network.h"
#include "protocol.h"

#include <json-glib/json-glib.h>
#include <string.h>

G_DEFINE_QUARK (airlock-bundle-error-quark, airlock_bundle_error)

char *
airlock_bundle_events_jsonl (AirlockArch arch, GPtrArray *events)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; events && i < events->len; i++)
    {
      g_autofree char *line = airlock_event_to_json (arch, events->pdata[i]);

      g_string_append (out, line);
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

char *
airlock_bundle_frames_jsonl (GPtrArray *frames)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; frames && i < frames->len; i++)
    {
      const AirlockFrame *f = frames->pdata[i];
      g_autoptr (JsonBuilder) b = json_builder_new ();
      g_autofree char *chain = airlock_hex_encode (f->chain, 32);
      g_autofree char *line = NULL;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "seq");
      json_builder_add_int_value (b, (gint64) f->seq);
      json_builder_set_member_name (b, "type");
      json_builder_add_int_value (b, f->type);
      json_builder_set_member_name (b, "offset");
      json_builder_add_int_value (b, (gint64) f->offset);
      json_builder_set_member_name (b, "size");
      json_builder_add_int_value (b, (gint64) f->size);
      json_builder_set_member_name (b, "received_mono_us");
      json_builder_add_int_value (b, f->received_mono_us);
      json_builder_set_member_name (b, "received_real_us");
      json_builder_add_int_value (b, f->received_real_us);
      json_builder_set_member_name (b, "chain");
      json_builder_add_string_value (b, chain);
      json_builder_end_object (b);
      line = airlock_json_builder_to_text (b, FALSE);
      g_string_append (out, line);
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

char *
airlock_bundle_verdict_json (const AirlockBundleFacts *facts)
{
  const AirlockVerdict *v = facts->verdict;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "verdict", airlock_verdict_kind_to_string (v->kind));
  airlock_json_set_str (b, "arch", airlock_arch_to_string (facts->arch));
  airlock_json_set_str (b, "case", facts->case_name);
  json_builder_set_member_name (b, "image");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "reference", facts->reference);
  airlock_json_set_image_digests (b, facts->index_digest, facts->manifest_digest,
                                  facts->config_digest);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "controls");
  json_builder_begin_object (b);
  airlock_json_set_int (b, "observed", v->n_controls_ok);
  airlock_json_set_int (b, "total", v->controls->len);
  json_builder_set_member_name (b, "each");
  json_builder_begin_array (b);
  for (guint i = 0; i < v->controls->len; i++)
    {
      const AirlockControlResult *c = v->controls->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_str (b, "name", c->name);
      airlock_json_set_str (b, "key", c->key);
      json_builder_set_member_name (b, "supervisor");
      json_builder_add_boolean_value (b, c->by_supervisor);
      json_builder_set_member_name (b, "capture");
      json_builder_add_boolean_value (b, c->in_capture);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "counts");
  json_builder_begin_object (b);
  airlock_json_set_int (b, "attempts", v->n_attempts);
  airlock_json_set_int (b, "admitted", v->n_admitted);
  airlock_json_set_int (b, "denied", v->n_denied);
  airlock_json_set_int (b, "unattributed", v->n_unattributed);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "reasons");
  json_builder_begin_array (b);
  for (guint i = 0; i < v->reasons->len; i++)
    json_builder_add_string_value (b, v->reasons->pdata[i]);
  json_builder_end_array (b);
  /* What a pass covers: a workload that waits past the time limit was not
   * observed doing what it does later (said here, not only in the docs). */
  json_builder_set_member_name (b, "ended_by_time_limit");
  json_builder_add_boolean_value (b, v->ended_by_time_limit);
  airlock_json_set_str (b, "observation", v->observation);
  /* How much of the workload's time that was, in guest and wall time: a
   * warped clock covers hours of the first in seconds of the second. */
  if (!facts->before_clock)
    airlock_json_set_str (b, "clock", v->clock_warp ? "warp" : "real");
  if (v->observed_guest_ms >= 0)
    airlock_json_set_int (b, "observed_guest_ms", v->observed_guest_ms);
  if (v->observed_wall_ms >= 0)
    airlock_json_set_int (b, "observed_wall_ms", v->observed_wall_ms);
  airlock_json_set_str (b, "chain_head", facts->chain_head);
  airlock_json_set_str (b, "evidence_sha256", facts->evidence_sha256);
  json_builder_end_object (b);

  return airlock_json_builder_to_text (b, TRUE);
}

/* Guest strings end up in a CI job's page: nothing in them may turn into
 * Markdown or HTML (a link, an image, a table cell break). */
static void
append_md_text (GString *out, const char *s)
{
  for (; s && *s; s++)
    {
      if (strchr ("\\`*_[]<>|~&", *s))
        g_string_append_c (out, '\\');
      g_string_append_c (out, *s);
    }
}

#define SUMMARY_MAX_ROWS 100

/* The negative controls' flow keys, to tell their records from the
 * workload's.  The strings are the verdict's. */
static GPtrArray *
control_keys (const AirlockVerdict *v)
{
  GPtrArray *keys = g_ptr_array_new ();

  for (guint i = 0; v && i < v->controls->len; i++)
    g_ptr_array_add (keys, ((AirlockControlResult *) v->controls->pdata[i])->key);
  return keys;
}

/* What the sinkhole served, host-side: the workload's connections and
 * lookups (the controls' are counted, not listed).  Nothing for a bundle
 * that says nothing of a sinkhole, so its summary reads as it was
 * written. */
static void
summary_network (GString *out, const AirlockBundleFacts *facts)
{
  g_autoptr (GPtrArray) controls = NULL;
  g_autoptr (AirlockNetworkReport) report = NULL;
  guint rows = 0, more = 0;

  if (!facts->sinkhole)
    {
      if (facts->sinkhole_error)
        {
          g_string_append (out, "#### Network\n\nNo records of the network: ");
          append_md_text (out, facts->sinkhole_error);
          g_string_append (out, "\n\n");
        }
      return;
    }
  controls = control_keys (facts->verdict);
  report = airlock_network_report_new (facts->sinkhole, controls);
  g_string_append (out, "#### Network, as the sinkhole served it\n\n");
  for (guint i = 0; i < report->connections->len; i++)
    {
      const AirlockNetworkConnection *c = report->connections->pdata[i];

      if (c->control)
        continue;
      if (rows == SUMMARY_MAX_ROWS)
        {
          more++;
          continue;
        }
      if (rows++ == 0)
        g_string_append (out, "| name | address | port | protocol | sent | bytes in/out | response |\n"
                              "|---|---|---|---|---|---|---|\n");
      g_string_append (out, "| ");
      append_md_text (out, c->name ? c->name : "-");
      g_string_append (out, " | ");
      append_md_text (out, c->address);
      g_string_append_printf (out, " | %u | %s | ", c->port, c->protocol);
      append_md_text (out, c->detail ? c->detail : "-");
      g_string_append_printf (out, " | %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " | ",
                              c->bytes_in, c->bytes_out);
      append_md_text (out, c->response ? c->response : "-");
      g_string_append (out, " |\n");
    }
  if (rows)
    g_string_append_c (out, '\n');
  rows = 0;
  for (guint i = 0; i < report->lookups->len; i++)
    {
      const AirlockNetworkLookup *l = report->lookups->pdata[i];

      if (l->control)
        continue;
      if (rows == SUMMARY_MAX_ROWS)
        {
          more++;
          continue;
        }
      if (rows++ == 0)
        g_string_append (out, "| DNS question | type | answer | over |\n|---|---|---|---|\n");
      g_string_append (out, "| ");
      append_md_text (out, l->question ? l->question : "(none decoded)");
      g_string_append_printf (out, " | %s | ", l->qtype ? l->qtype : "-");
      append_md_text (out, l->answer);
      g_string_append_printf (out, " | %s |\n", l->transport);
    }
  if (rows)
    g_string_append_c (out, '\n');
  if (report->connections->len + report->lookups->len == report->n_controls)
    g_string_append (out, "The workload reached nothing on the network.\n\n");
  if (more)
    g_string_append_printf (out, "… and %u more (network.jsonl has them all)\n\n", more);
  if (report->n_controls)
    g_string_append_printf (out, "%u record%s of the negative controls not shown.\n\n",
                            report->n_controls, report->n_controls == 1 ? "" : "s");
  if (!report->complete)
    {
      g_string_append (out, "The records are incomplete: ");
      append_md_text (out, report->incomplete_reason ? report->incomplete_reason : "no reason given");
      g_string_append (out, "\n\n");
    }
  if (report->records_dropped)
    g_string_append_printf (out, "%" G_GUINT64_FORMAT " record(s) past the limit were dropped.\n\n",
                            report->records_dropped);
  if (report->frames_refused)
    {
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " frame(s) under a forged source were "
                              "refused; the first: ", report->frames_refused);
      append_md_text (out, report->first_refused ? report->first_refused : "?");
      g_string_append (out, "\n\n");
    }
}

char *
airlock_bundle_summary_md (const AirlockBundleFacts *facts)
{
  const AirlockVerdict *v = facts->verdict;
  GString *out = g_string_new (NULL);
  guint rows = 0, more = 0;

  g_string_append_printf (out, "### airlock %s: **%s**", airlock_arch_to_string (facts->arch),
                          airlock_verdict_kind_to_string (v->kind));
  if (facts->case_name)
    {
      g_string_append (out, " (");
      append_md_text (out, facts->case_name);
      g_string_append (out, ")");
    }
  g_string_append (out, "\n\n| | |\n|---|---|\n| image | ");
  append_md_text (out, facts->reference ? facts->reference : "(test program)");
  g_string_append_printf (out, " |\n| index | %s |\n| manifest | %s |\n",
                          facts->index_digest ? facts->index_digest : "-",
                          facts->manifest_digest ? facts->manifest_digest : "-");
  if (v->observation)
    g_string_append_printf (out, "| observed | %s |\n", v->observation);
  g_string_append_printf (out, "| controls | %u/%u |\n| egress attempts | %u (%u admitted) |\n"
                          "| denied | %u |\n| unattributed flows | %u |\n| accelerator | %s |\n"
                          "| chain head | %s |\n\n",
                          v->n_controls_ok, v->controls->len, v->n_attempts, v->n_admitted,
                          v->n_denied, v->n_unattributed, facts->accel ? facts->accel : "-",
                          facts->chain_head ? facts->chain_head : "-");
  /* After the table's end, so a bundle from before the hello said it
   * derives the same summary. */
  if (facts->recorder)
    g_string_append_printf (out, "Recorded by: %s (docs/supervisor.md).\n\n", facts->recorder);

  for (guint i = 0; facts->events && i < facts->events->len; i++)
    {
      const AirlockEvent *ev = facts->events->pdata[i];
      const AirlockVerdictAttempt *j;
      g_autofree char *key = NULL;
      g_autofree char *outcome = NULL;

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || ev->phase == AIRLOCK_PHASE_CONTROLS)
        continue;
      j = airlock_verdict_lookup (v, ev->seq);
      if (!j)
        continue;
      if (rows == SUMMARY_MAX_ROWS)
        {
          more++;
          continue;
        }
      if (rows++ == 0)
        g_string_append (out, "| process | attempt | DNS names | outcome | policy |\n"
                              "|---|---|---|---|---|\n");
      key = airlock_event_key_line (ev);
      outcome = airlock_event_outcome (ev);
      g_string_append (out, "| ");
      append_md_text (out, ev->exe ? ev->exe : "?");
      g_string_append_printf (out, " \\(pid %u\\) | ", ev->has_nspid ? ev->nspid : ev->pid);
      append_md_text (out, key);
      g_string_append (out, " | ");
      for (guint d = 0; d < ev->dns->len; d++)
        {
          const AirlockDnsQuery *q = ev->dns->pdata[d];

          for (guint k = 0; k < q->questions->len; k++)
            {
              append_md_text (out, ((AirlockDnsQuestion *) q->questions->pdata[k])->name);
              g_string_append_c (out, ' ');
            }
        }
      g_string_append (out, "| ");
      append_md_text (out, outcome);
      g_string_append_printf (out, " | %s |\n",
                              j->denied ? "denied" : j->admitted ? "admitted" : "**not admitted**");
    }
  if (more)
    g_string_append_printf (out, "\n… and %u more (events.jsonl has them all)\n", more);
  if (rows)
    g_string_append_c (out, '\n');
  summary_network (out, facts);
  if (v->reasons->len)
    {
      g_string_append (out, "#### Reasons\n\n");
      for (guint i = 0; i < v->reasons->len; i++)
        {
          g_string_append (out, "- ");
          append_md_text (out, v->reasons->pdata[i]);
          g_string_append_c (out, '\n');
        }
    }
  else
    g_string_append (out, "No egress, every negative control seen, the evidence whole.\n");
  return g_string_free (out, FALSE);
}
