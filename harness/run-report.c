/* The machine-read reports of `airlock run` and `airlock gate`
 * (run-report.h; the JSON schema in docs/json.md). */
#include "config.h"

#include "run-report.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

void
run_report_init (RunReport *r, gboolean gate)
{
  memset (r, 0, sizeof *r);
  r->gate = gate;
  r->command = gate ? "airlock gate" : "airlock run";
  r->text = harness_out ();
  r->errors = g_ptr_array_new_with_free_func (g_free);
}

void
run_report_clear (RunReport *r)
{
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      g_clear_pointer (&r->results[a], airlock_result_free);
      g_clear_pointer (&r->arch_errors[a], g_free);
    }
  g_clear_pointer (&r->errors, g_ptr_array_unref);
}

void
run_report_error (RunReport *r, int arch, const char *format, ...)
{
  va_list ap;
  const char *message;

  va_start (ap, format);
  message = harness_keep_error (r->errors, r->command, format, ap);
  va_end (ap);
  if (arch >= 0 && arch < AIRLOCK_N_ARCHES && !r->arch_errors[arch])
    r->arch_errors[arch] = g_strdup (message);
}

const char *
run_report_arch_verdict (const RunReport *r, AirlockArch arch)
{
  AirlockResult *result = r->results[arch];

  /* A verdict whose bundle could not be written cannot be shown to
   * anyone: it counts as no verdict, as the table says. */
  if (!result || airlock_result_get_bundle_error (result))
    return "inconclusive";
  return airlock_verdict_kind_to_string (airlock_result_get_verdict (result));
}

const char *
run_report_end_reason (guint32 reason)
{
  switch (reason)
    {
    case AIRLOCK_END_COMPLETED:
      return "completed";
    case AIRLOCK_END_TIMEOUT:
      return "timeout";
    case AIRLOCK_END_ERROR:
      return "error";
    case AIRLOCK_END_WALL_LIMIT:
      return "wall-time limit";
    default:
      return "unknown";
    }
}

/* The builder's object as one line on stdout. */
static void
print_line (JsonBuilder *b)
{
  g_autofree char *line = airlock_json_builder_to_text (b, FALSE);

  fprintf (harness_out (), "%s\n", line);
}

static gboolean
attempt_offends (const AirlockAttempt *at)
{
  return (at->egress && !at->admitted) || at->denied;
}

/* One attempt in words, for a JUnit failure and an annotation. */
static char *
attempt_text (const AirlockAttempt *at)
{
  return g_strdup_printf ("%s: %s%s%s%s%s%s",
                          at->denied ? "denied as an escape" : "egress not admitted by the policy",
                          at->key, at->host ? " (" : "", at->host ? at->host : "",
                          at->host ? ")" : "", at->exe ? " by " : "", at->exe ? at->exe : "");
}

static void
add_attempt (JsonBuilder *b, const AirlockAttempt *at)
{
  json_builder_begin_object (b);
  airlock_json_set_int (b, "seq", (gint64) at->seq);
  airlock_json_set_str (b, "key", at->key);
  airlock_json_set_str (b, "syscall", at->syscall);
  airlock_json_set_str (b, "exe", at->exe);
  airlock_json_set_int (b, "pid", at->pid);
  airlock_json_set_str (b, "family", at->family);
  airlock_json_set_str (b, "protocol", at->protocol);
  airlock_json_set_str (b, "address", at->address);
  airlock_json_set_int (b, "port", at->port);
  airlock_json_set_str (b, "host", at->host);
  airlock_json_set_strv (b, "dns_names", at->dns_names);
  airlock_json_set_str (b, "outcome", at->outcome);
  airlock_json_set_bool (b, "egress", at->egress);
  airlock_json_set_bool (b, "admitted", at->admitted);
  airlock_json_set_bool (b, "denied", at->denied);
  airlock_json_set_bool (b, "offending", attempt_offends (at));
  json_builder_end_object (b);
}

static void
add_reasons (JsonBuilder *b, AirlockResult *result)
{
  const char *const *reasons = result ? airlock_result_get_reasons (result) : NULL;
  static const char *const none[] = { NULL };

  airlock_json_set_strv (b, "reasons", reasons ? reasons : none);
}

void
run_report_json_run (AirlockArch arch, AirlockResult *result)
{
  const char *arch_name = airlock_arch_to_string (arch);
  const AirlockRunRecord *record = airlock_result_get_record (result);
  const AirlockImage *oci = airlock_result_get_image (result);
  GPtrArray *exchanges = airlock_result_get_exchanges (result);
  GBytes *streams[2] = { record->stdout_bytes, record->stderr_bytes };
  static const char *const stream_names[2] = { "stdout", "stderr" };
  int wait_status;

  if (oci)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "image");
      airlock_json_set_str (b, "arch", arch_name);
      airlock_json_set_str (b, "reference", oci->reference);
      airlock_json_set_str (b, "platform", oci->platform);
      airlock_json_set_image_digests (b, oci->index_digest, oci->manifest_digest, oci->config_digest);
      json_builder_end_object (b);
      print_line (b);
    }
  for (guint i = 0; record->events && i < record->events->len; i++)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "event");
      airlock_event_add_json_members (b, arch, record->events->pdata[i]);
      json_builder_end_object (b);
      print_line (b);
    }
  for (guint i = 0; i < exchanges->len; i++)
    {
      const AirlockResultExchange *x = exchanges->pdata[i];
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "network");
      airlock_json_set_str (b, "arch", arch_name);
      airlock_json_set_str (b, "kind", x->kind);
      airlock_json_set_str (b, "address", x->address);
      airlock_json_set_int (b, "port", x->port);
      airlock_json_set_str (b, "name", x->name);
      airlock_json_set_str (b, "question", x->question);
      if (x->answers)
        airlock_json_set_strv (b, "answers", x->answers);
      airlock_json_set_str (b, "protocol", x->protocol);
      airlock_json_set_str (b, "http_method", x->http_method);
      airlock_json_set_str (b, "http_path", x->http_path);
      airlock_json_set_str (b, "http_host", x->http_host);
      airlock_json_set_str (b, "http_user_agent", x->http_user_agent);
      airlock_json_set_str (b, "tls_sni", x->tls_sni);
      airlock_json_set_str (b, "tls_version", x->tls_version);
      airlock_json_set_str (b, "ssh_banner", x->ssh_banner);
      airlock_json_set_int (b, "bytes_in", (gint64) x->bytes_in);
      airlock_json_set_int (b, "bytes_out", (gint64) x->bytes_out);
      airlock_json_set_str (b, "response", x->response);
      json_builder_end_object (b);
      print_line (b);
    }
  for (int i = 0; i < 2; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (streams[i], &len);
      g_autoptr (JsonBuilder) b = NULL;
      g_autofree char *text = NULL;

      if (len == 0)
        continue;
      /* Escaped as every guest string is: valid UTF-8, nothing that
       * moves a terminal's cursor when a person reads the line. */
      text = airlock_evidence_escape_bytes (data, len);
      b = json_builder_new ();
      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "output");
      airlock_json_set_str (b, "arch", arch_name);
      airlock_json_set_str (b, "stream", stream_names[i]);
      airlock_json_set_int (b, "bytes", (gint64) len);
      airlock_json_set_bool (b, "truncated", record->output_truncated);
      airlock_json_set_str (b, "text", text);
      json_builder_end_object (b);
      print_line (b);
    }
  {
    g_autoptr (JsonBuilder) b = json_builder_new ();

    json_builder_begin_object (b);
    airlock_json_set_str (b, "type", "run");
    airlock_json_set_str (b, "arch", arch_name);
    airlock_json_set_str (b, "accel", record->accel);
    airlock_json_set_bool (b, "complete", record->complete);
    airlock_json_set_str (b, "incomplete_reason", record->complete ? NULL : record->incomplete_reason);
    airlock_json_set_str (b, "end", record->has_trailer ? run_report_end_reason (record->trailer.end_reason)
                                                        : NULL);
    if (airlock_result_get_wait_status (result, &wait_status))
      {
        g_autofree char *text = airlock_wait_status_to_string (wait_status);

        airlock_json_set_int (b, "wait_status", wait_status);
        airlock_json_set_str (b, "exit", text);
      }
    else
      {
        airlock_json_set_str (b, "wait_status", NULL);
        airlock_json_set_str (b, "exit", NULL);
      }
    airlock_json_set_str (b, "clock", record->clock_warp ? "warp" : "real");
    if (record->observed_guest_ms >= 0 && record->observed_wall_ms >= 0)
      {
        airlock_json_set_int (b, "observed_guest_ms", record->observed_guest_ms);
        airlock_json_set_int (b, "observed_wall_ms", record->observed_wall_ms);
      }
    else
      {
        airlock_json_set_str (b, "observed_guest_ms", NULL);
        airlock_json_set_str (b, "observed_wall_ms", NULL);
      }
    airlock_json_set_str (b, "bundle", airlock_result_get_bundle_dir (result));
    airlock_json_set_str (b, "bundle_error", airlock_result_get_bundle_error (result));
    json_builder_end_object (b);
    print_line (b);
  }
  fflush (harness_out ());
}

void
run_report_json_verdicts (const RunReport *r)
{
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockResult *result = r->results[a];
      const AirlockVerdict *v = result ? airlock_result_get_verdict_details (result) : NULL;
      g_autoptr (JsonBuilder) b = NULL;

      if (!r->arches[a])
        continue;
      b = json_builder_new ();
      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "verdict");
      airlock_json_set_str (b, "arch", airlock_arch_to_string ((AirlockArch) a));
      airlock_json_set_str (b, "verdict", run_report_arch_verdict (r, (AirlockArch) a));
      airlock_json_set_str (b, "error", r->arch_errors[a]);
      airlock_json_set_str (b, "manifest", result ? airlock_result_get_manifest_digest (result) : NULL);
      if (v)
        {
          airlock_json_set_int (b, "controls_seen", v->n_controls_ok);
          airlock_json_set_int (b, "controls", v->controls->len);
          airlock_json_set_int (b, "attempts", v->n_attempts);
          airlock_json_set_int (b, "admitted", v->n_admitted);
          airlock_json_set_int (b, "denied", v->n_denied);
          airlock_json_set_int (b, "unattributed", v->n_unattributed);
          airlock_json_set_str (b, "ended", v->ended_by_time_limit ? "time limit"
                                            : v->observation ? "exited" : NULL);
          airlock_json_set_str (b, "observation", v->observation);
        }
      airlock_json_set_str (b, "bundle_error", result ? airlock_result_get_bundle_error (result) : NULL);
      airlock_json_set_str (b, "hypervisor", result ? airlock_result_get_hypervisor (result) : NULL);
      airlock_json_set_str (b, "host_failure", result ? airlock_result_get_host_failure (result) : NULL);
      airlock_json_set_str (b, "lost_attempt", result ? airlock_result_get_lost_attempt (result) : NULL);
      add_reasons (b, result);
      json_builder_end_object (b);
      print_line (b);
    }
  fflush (harness_out ());
}

const char *
run_report_overall_verdict (const RunReport *r)
{
  gboolean any = FALSE, failed = FALSE;

  if (!r->gate || !r->ran)
    return NULL;
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      const char *v;

      if (!r->arches[a])
        continue;
      any = TRUE;
      v = run_report_arch_verdict (r, (AirlockArch) a);
      if (g_str_equal (v, "inconclusive"))
        return "inconclusive";
      failed = failed || g_str_equal (v, "fail");
    }
  return !any ? NULL : failed ? "fail" : "pass";
}

void
run_report_json_summary (const RunReport *r, const char *type, int exit_status)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "type", type);
  airlock_json_set_str (b, "command", r->gate ? "gate" : "run");
  airlock_json_set_int (b, "exit_status", exit_status);
  airlock_json_set_str (b, "verdict", run_report_overall_verdict (r));
  g_ptr_array_add (r->errors, NULL);
  airlock_json_set_strv (b, "errors", (const char *const *) r->errors->pdata);
  g_ptr_array_remove_index (r->errors, r->errors->len - 1);
  json_builder_set_member_name (b, "arches");
  json_builder_begin_object (b);
  for (unsigned a = 0; r->arches_known && a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockResult *result = r->results[a];
      GPtrArray *attempts = result ? airlock_result_get_attempts (result) : NULL;

      if (!r->arches[a])
        continue;
      json_builder_set_member_name (b, airlock_arch_to_string ((AirlockArch) a));
      json_builder_begin_object (b);
      /* No verdict at all when an error came before any boot. */
      airlock_json_set_str (b, "verdict", r->gate && r->ran ? run_report_arch_verdict (r, (AirlockArch) a)
                                                            : NULL);
      airlock_json_set_bool (b, "complete", result && airlock_result_is_complete (result));
      airlock_json_set_str (b, "error", r->arch_errors[a]);
      add_reasons (b, result);
      json_builder_set_member_name (b, "attempts");
      json_builder_begin_array (b);
      for (guint i = 0; attempts && i < attempts->len; i++)
        add_attempt (b, attempts->pdata[i]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);
  print_line (b);
  fflush (harness_out ());
}

/* ---- JUnit ---- */

static void
append_escaped (GString *out, const char *text)
{
  g_autofree char *escaped = g_markup_escape_text (text, -1);

  g_string_append (out, escaped);
}

/* The failure's message: the offending attempts' keys, each once. */
static char *
failure_message (AirlockResult *result)
{
  GPtrArray *attempts = airlock_result_get_attempts (result);
  g_autoptr (GString) keys = g_string_new (NULL);
  guint n = 0;

  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *at = attempts->pdata[i];

      if (!attempt_offends (at))
        continue;
      g_string_append_printf (keys, "%s%s", n ? "; " : "", at->key);
      n++;
    }
  if (n == 0)
    return g_strdup ("verdict fail");
  return g_strdup_printf ("verdict fail: %u offending attempt%s: %s", n, n == 1 ? "" : "s",
                          keys->str);
}

/* Every reason, one a line: they name each offending attempt with its
 * name, SNI or Host and process, and what else failed. */
static char *
reasons_text (AirlockResult *result)
{
  GString *out = g_string_new (NULL);
  const char *const *reasons = result ? airlock_result_get_reasons (result) : NULL;

  for (guint i = 0; reasons && reasons[i]; i++)
    g_string_append_printf (out, "%s\n", reasons[i]);
  return g_string_free (out, FALSE);
}

void
run_report_junit_suite (const RunReport *r, GString *out, guint *tests, guint *failures,
                        guint *errors)
{
  g_autoptr (GString) cases = g_string_new (NULL);
  const char *reference = NULL;
  guint n_tests = 0, n_failures = 0, n_errors = 0;

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockResult *result = r->results[a];
      const char *arch_name = airlock_arch_to_string ((AirlockArch) a);
      const char *verdict;

      if (!r->arches[a])
        continue;
      n_tests++;
      if (result && !reference)
        reference = airlock_result_get_reference (result);
      verdict = run_report_arch_verdict (r, (AirlockArch) a);
      g_string_append_printf (cases, "    <testcase classname=\"airlock.gate\" name=\"%s\">\n",
                              arch_name);
      if (g_str_equal (verdict, "fail"))
        {
          g_autofree char *message = failure_message (result);
          g_autofree char *body = reasons_text (result);

          n_failures++;
          g_string_append (cases, "      <failure type=\"fail\" message=\"");
          append_escaped (cases, message);
          g_string_append (cases, "\">");
          append_escaped (cases, body);
          g_string_append (cases, "</failure>\n");
        }
      else if (g_str_equal (verdict, "inconclusive"))
        {
          /* Not a finding about the image: the gate could not judge it,
           * which a pipeline must not read as a pass. */
          g_autofree char *reasons = reasons_text (result);

          n_errors++;
          g_string_append (cases, "      <error type=\"inconclusive\" message=\"verdict inconclusive\">");
          if (r->arch_errors[a])
            {
              append_escaped (cases, r->arch_errors[a]);
              g_string_append_c (cases, '\n');
            }
          append_escaped (cases, reasons);
          g_string_append (cases, "</error>\n");
        }
      g_string_append (cases, "    </testcase>\n");
    }
  g_string_append (out, "  <testsuite name=\"");
  append_escaped (out, reference ? reference : "airlock gate");
  g_string_append_printf (out, "\" tests=\"%u\" failures=\"%u\" errors=\"%u\">\n", n_tests,
                          n_failures, n_errors);
  g_string_append (out, cases->str);
  g_string_append (out, "  </testsuite>\n");
  *tests += n_tests;
  *failures += n_failures;
  *errors += n_errors;
}

gboolean
run_report_write_junit_suites (const char *path, const GString *suites, guint tests,
                               guint failures, guint errors, GError **error)
{
  g_autoptr (GString) doc = g_string_new ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");

  g_string_append_printf (doc, "<testsuites name=\"airlock gate\" tests=\"%u\" failures=\"%u\" "
                          "errors=\"%u\">\n", tests, failures, errors);
  g_string_append (doc, suites->str);
  g_string_append (doc, "</testsuites>\n");
  if (!g_file_set_contents (path, doc->str, (gssize) doc->len, error))
    {
      g_prefix_error (error, "--junit: ");
      return FALSE;
    }
  return TRUE;
}

gboolean
run_report_write_junit (const RunReport *r, const char *path, GError **error)
{
  g_autoptr (GString) suite = g_string_new (NULL);
  guint tests = 0, failures = 0, errors = 0;

  run_report_junit_suite (r, suite, &tests, &failures, &errors);
  return run_report_write_junit_suites (path, suite, tests, failures, errors, error);
}

/* ---- GitHub Actions ---- */

/* A workflow command's message: '%', CR and LF would end or garble it. */
static void
print_annotation (AirlockArch arch, const char *message)
{
  GString *out = g_string_new (NULL);

  for (const char *p = message; *p; p++)
    if (*p == '%')
      g_string_append (out, "%25");
    else if (*p == '\r')
      g_string_append (out, "%0D");
    else if (*p == '\n')
      g_string_append (out, "%0A");
    else
      g_string_append_c (out, *p);
  fprintf (harness_out (),
           "::error title=airlock %s::%s\n", airlock_arch_to_string (arch), out->str);
  g_string_free (out, TRUE);
}

void
run_report_github_annotations (const RunReport *r)
{
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockResult *result = r->results[a];
      const char *verdict;
      guint n = 0;

      if (!r->arches[a])
        continue;
      verdict = run_report_arch_verdict (r, (AirlockArch) a);
      if (g_str_equal (verdict, "pass"))
        continue;
      if (result)
        {
          GPtrArray *attempts = airlock_result_get_attempts (result);

          for (guint i = 0; i < attempts->len; i++)
            if (attempt_offends (attempts->pdata[i]))
              {
                g_autofree char *text = attempt_text (attempts->pdata[i]);

                print_annotation ((AirlockArch) a, text);
                n++;
              }
        }
      if (n > 0)
        continue;
      /* A verdict that names no attempt (a blind control, an unattributed
       * flow, an inconclusive run): each of its reasons. */
      if (r->arch_errors[a])
        print_annotation ((AirlockArch) a, r->arch_errors[a]);
      for (const char *const *reasons = result ? airlock_result_get_reasons (result) : NULL;
           reasons && *reasons; reasons++)
        print_annotation ((AirlockArch) a, *reasons);
      if (!r->arch_errors[a] && !(result && airlock_result_get_reasons (result)
                                  && airlock_result_get_reasons (result)[0]))
        {
          g_autofree char *text = g_strdup_printf ("verdict %s", verdict);

          print_annotation ((AirlockArch) a, text);
        }
    }
  fflush (harness_out ());
}
