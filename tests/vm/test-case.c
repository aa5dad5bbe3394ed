/* The C case API and its GLib test integration, as a user's test suite
 * uses them, on every arch (the registration is airlock_test_add's own):
 * a stdio conversation with the rpc sample, the assertions' reports on the
 * egress sample, env overrides, the bundle the API writes and verifies,
 * and the errors a wrong case gets before any VM boots. */
#include "config.h"

#include <airlock.h>

#include "bundle/bundle.h"
#include "fsutil-private.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

static const char *sample_dir;

static char *
sample_ref (const char *name)
{
  return g_strdup_printf ("oci-archive:%s/%s.tar", sample_dir, name);
}

/* The fixture's case, for another sample image, named after the test. */
static void
use_image (AirlockTestFixture *f, const char *name)
{
  g_autofree char *ref = sample_ref (name);

  airlock_case_free (f->kase);
  f->kase = airlock_case_new (ref);
  airlock_case_set_name (f->kase, g_test_get_path ());
}

static JsonObject *
parse_object (JsonParser *parser, const char *line)
{
  g_autoptr (GError) error = NULL;

  if (!json_parser_load_from_data (parser, line, -1, &error))
    g_error ("the server's answer '%s' is not JSON: %s", line, error->message);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_node_get_object (json_parser_get_root (parser));
}

static void
test_conversation (AirlockTestFixture *f, gconstpointer data)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *line = NULL;
  g_autofree char *answer = NULL;
  g_autofree char *dir = g_build_filename (g_get_tmp_dir (), "airlock-test-case-XXXXXX", NULL);
  g_autofree char *bundle = NULL;
  g_autoptr (GBytes) key = g_bytes_new_static ("a key of thirty-two bytes, fixed", 32);
  g_autoptr (GBytes) other = g_bytes_new_static ("another key of 32 bytes, fixed!!", 32);
  g_autoptr (AirlockBundleReport) report = NULL;
  g_autoptr (AirlockBundleReport) wrong = NULL;
  AirlockResult *r;
  JsonObject *o;
  GBytes *so;

  g_assert_nonnull (g_mkdtemp (dir));
  bundle = g_build_filename (dir, "bundle", NULL);
  use_image (f, "rpc");
  airlock_case_set_timeout (f->kase, 300);
  airlock_case_set_bundle_dir (f->kase, bundle);
  airlock_case_set_bundle_key (f->kase, key);
  airlock_test_start (f);

  /* Nothing asked, nothing answered: a bounded wait, the run goes on. */
  line = airlock_run_read_line (f->run, 300, &error);
  g_assert_null (line);
  g_assert_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_TIMEOUT);
  g_clear_error (&error);

  answer = airlock_test_exchange (f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                                     "\"params\":{\"protocolVersion\":\"2024-11-05\"}}", 120000);
  o = parse_object (parser, answer);
  g_assert_cmpint (json_object_get_int_member (o, "id"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (
                       json_object_get_object_member (json_object_get_object_member (o, "result"),
                                                      "serverInfo"), "name"),
                   ==, "airlock-rpc-sample");
  g_clear_pointer (&answer, g_free);
  answer = airlock_test_exchange (f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                                     "\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}}",
                                  120000);
  g_assert_nonnull (strstr (answer, "\"id\":2"));
  g_assert_nonnull (strstr (answer, "\"text\":\"5\""));

  airlock_run_close_stdin (f->run);
  g_assert_false (airlock_run_write_stdin (f->run, "x\n", 2, &error));
  g_assert_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_CLOSED);
  g_clear_error (&error);

  r = airlock_test_wait (f);
  airlock_assert_verdict (r, AIRLOCK_VERDICT_PASS);
  airlock_assert_no_egress (r);
  airlock_assert_controls_observed (r);
  airlock_assert_exit_code (r, 0);
  /* Lines read during the run are still the result's stdout. */
  airlock_assert_stdout_contains (r, "airlock-rpc-sample");
  so = airlock_result_get_stdout (r);
  g_assert_cmpuint (g_bytes_get_size (so), >, 0);
  g_assert_cmpuint (airlock_result_get_attempts (r)->len, ==, 0);
  g_assert_cmpuint (airlock_result_get_controls (r)->len, ==, 12);
  g_assert_true (g_str_has_prefix (airlock_result_get_manifest_digest (r), "sha256:"));
  g_assert_true (g_str_has_prefix (airlock_result_get_index_digest (r), "sha256:"));

  /* The bundle the API wrote verifies under its key, and not another. */
  g_assert_cmpstr (airlock_result_get_bundle_dir (r), ==, bundle);
  g_assert_null (airlock_result_get_bundle_error (r));
  report = airlock_bundle_verify (bundle, key);
  for (guint i = 0; i < report->problems->len; i++)
    g_test_message ("problem: %s: %s", ((AirlockBundleProblem *) report->problems->pdata[i])->file,
                    ((AirlockBundleProblem *) report->problems->pdata[i])->message);
  g_assert_cmpuint (report->problems->len, ==, 0);
  g_assert_true (report->hmac_checked);
  g_assert_cmpstr (report->verdict, ==, "pass");
  wrong = airlock_bundle_verify (bundle, other);
  g_assert_cmpuint (wrong->problems->len, ==, 1);
  g_assert_cmpstr (((AirlockBundleProblem *) wrong->problems->pdata[0])->file, ==, "manifest.hmac");
  {
    g_autofree char *stdin_path = g_build_filename (bundle, "stdin", NULL);
    g_autofree char *recorded = NULL;

    /* What was forwarded to the workload is in the bundle, as sent. */
    g_assert_true (g_file_get_contents (stdin_path, &recorded, NULL, NULL));
    g_assert_nonnull (strstr (recorded, "\"method\":\"initialize\""));
    g_assert_nonnull (strstr (recorded, "\"method\":\"tools/call\""));
  }
  airlock_rm_rf (dir);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}

static void
assert_message_has (const GError *error, const char *const *needles)
{
  g_assert_nonnull (error);
  for (guint i = 0; needles[i]; i++)
    if (!strstr (error->message, needles[i]))
      g_error ("the report lacks '%s':\n%s", needles[i], error->message);
}

static void
test_egress_reports (AirlockTestFixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  AirlockResult *r;
  GPtrArray *attempts;
  guint egress = 0;

  use_image (f, "egress");
  r = airlock_test_run (f);

  attempts = airlock_result_get_attempts (r);
  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];

      if (!a->egress)
        continue;
      egress++;
      g_assert_cmpstr (a->exe, ==, "/usr/local/bin/egress-probe");
      g_assert_false (a->admitted);
    }
  /* DNS, and on the sinkhole network a connect and a send to each of
   * the two ports. */
  g_assert_cmpuint (egress, ==, 5);

  {
    const char *const want[] = {
      "expected no egress", "/case/egress-reports", "egress attempts:",
      "/usr/local/bin/egress-probe sendto inet udp 10.0.2.3 port 53 dns=example.com.",
      "/usr/local/bin/egress-probe connect inet tcp 198.18.243.18 port 80",
      "/usr/local/bin/egress-probe connect inet tcp 198.18.243.18 port 443",
      "evidence: no bundle", NULL,
    };

    g_assert_false (airlock_check_no_egress (r, &error));
    assert_message_has (error, want);
    g_clear_error (&error);
  }
  {
    /* The connections admitted: only the DNS query is reported. */
    const char *const want[] = {
      "expected egress only to", "sendto inet udp 10.0.2.3 port 53 dns=example.com.", NULL,
    };

    g_assert_false (airlock_check_egress_only_to (r, "allow tcp 198.18.243.18 port 80\n"
                                                     "allow tcp 198.18.243.18 port 443", &error));
    assert_message_has (error, want);
    g_assert_null (strstr (error->message, "port 443 ("));
    g_clear_error (&error);
  }
  g_assert_true (airlock_check_egress_only_to (r, "allow tcp 198.18.243.18 port 80\n"
                                                  "allow tcp 198.18.243.18 port 443\n"
                                                  "allow udp 10.0.2.3 port 53 dns=example.com",
                                               &error));
  g_assert_no_error (error);
  /* By name: the sinkhole handed the address out for example.com, so
   * host= admits both connections, and another name neither. */
  g_assert_true (airlock_check_egress_only_to (r, "allow tcp any port 80 host=example.com\n"
                                                  "allow tcp any port 443 host=example.com\n"
                                                  "allow udp any port 53 dns=example.com",
                                               &error));
  g_assert_no_error (error);
  g_assert_false (airlock_check_egress_only_to (r, "allow tcp any port 80 host=example.org\n"
                                                   "allow tcp any port 443 host=example.org\n"
                                                   "allow udp any port 53 dns=example.com",
                                                &error));
  g_clear_error (&error);
  {
    /* What the sinkhole took in, host-side: the question and its answer,
     * GET / with Host example.com on 80, SNI example.com on 443. */
    GPtrArray *x = airlock_result_get_exchanges (r);
    gboolean dns = FALSE, http = FALSE, tls = FALSE;

    for (guint i = 0; i < x->len; i++)
      {
        const AirlockResultExchange *e = x->pdata[i];

        if (g_str_equal (e->kind, "dns") && g_strcmp0 (e->question, "example.com.") == 0)
          dns = e->answers[0] && g_str_equal (e->answers[0], "198.18.243.18");
        else if (g_str_equal (e->kind, "tcp") && e->port == 80)
          http = g_strcmp0 (e->http_host, "example.com") == 0 && g_strcmp0 (e->http_path, "/") == 0
                 && g_strcmp0 (e->name, "example.com.") == 0;
        else if (g_str_equal (e->kind, "tcp") && e->port == 443)
          tls = g_strcmp0 (e->tls_sni, "example.com") == 0 && g_strcmp0 (e->protocol, "tls") == 0;
      }
    g_assert_true (dns);
    g_assert_true (http);
    g_assert_true (tls);
  }
  {
    const char *const want[] = { "the rules do not parse", "allowed:1:", NULL };

    g_assert_false (airlock_check_egress_only_to (r, "allow tcp nowhere", &error));
    assert_message_has (error, want);
    g_clear_error (&error);
  }
  airlock_assert_controls_observed (r);
  airlock_assert_verdict (r, AIRLOCK_VERDICT_FAIL);
  {
    const char *const want[] = { "expected verdict pass, got fail",
                                 "egress not admitted by the policy", NULL };

    g_assert_false (airlock_check_verdict (r, AIRLOCK_VERDICT_PASS, &error));
    assert_message_has (error, want);
    g_clear_error (&error);
  }
  airlock_assert_exit_code (r, 0);
  {
    const char *const want[] = { "expected exit code 3, got 0", NULL };

    g_assert_false (airlock_check_exit_code (r, 3, &error));
    assert_message_has (error, want);
    g_clear_error (&error);
  }
  airlock_assert_stdout_contains (r, "egress-probe: done");
  {
    const char *const want[] = { "expected stdout to contain 'no such line'", "egress-probe: done",
                                 NULL };

    g_assert_false (airlock_check_stdout_contains (r, "no such line", &error));
    assert_message_has (error, want);
    g_clear_error (&error);
  }
}

static void
test_env_overrides (AirlockTestFixture *f, gconstpointer data)
{
  static const char input[] = "getenv GREETING\ngetenv AIRLOCK_SAMPLE\ngetenv PATH\nquit\n";
  g_autoptr (GBytes) in = g_bytes_new_static (input, strlen (input));
  AirlockResult *r;

  use_image (f, "clean");
  airlock_case_set_env (f->kase, "GREETING", "hello world");
  airlock_case_set_env (f->kase, "AIRLOCK_SAMPLE", NULL);
  airlock_case_set_stdin_bytes (f->kase, in);
  airlock_case_set_controls (f->kase, FALSE);
  r = airlock_test_run (f);
  airlock_assert_stdout_contains (r, "{\"getenv\":\"GREETING\",\"value\":\"hello world\"}");
  airlock_assert_stdout_contains (r, "{\"getenv\":\"AIRLOCK_SAMPLE\",\"value\":null}");
  airlock_assert_stdout_contains (r, "{\"getenv\":\"PATH\",\"value\":\"/usr/local/sbin:");
  airlock_assert_exit_code (r, 0);
  airlock_assert_no_egress (r);
  /* Without the controls nothing proves the detector saw: never a pass. */
  airlock_assert_verdict (r, AIRLOCK_VERDICT_INCONCLUSIVE);
}

/* Errors a wrong case gets before any VM boots, each naming the input. */
static void
test_invalid_cases (AirlockTestFixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockCase) c = NULL;
  g_autofree char *ref = sample_ref ("clean");
  g_autofree char *dir = g_build_filename (g_get_tmp_dir (), "airlock-test-case-XXXXXX", NULL);
  AirlockRun *run;

  g_assert_nonnull (g_mkdtemp (dir));
  c = airlock_case_new (ref);
  airlock_case_set_timeout (c, 0);
  run = airlock_session_start (f->session, c, &error);
  g_assert_null (run);
  g_assert_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "invalid timeout 0 s"));
  g_clear_error (&error);

  airlock_case_set_timeout (c, 10);
  airlock_case_set_env (c, "A=B", "c");
  g_assert_null (airlock_session_start (f->session, c, &error));
  g_assert_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'A=B'"));
  g_clear_error (&error);
  airlock_case_set_env (c, "A=B", NULL);
  g_clear_pointer (&c, airlock_case_free);

  c = airlock_case_new (ref);
  airlock_case_set_bundle_dir (c, dir);   /* exists */
  g_assert_null (airlock_session_start (f->session, c, &error));
  g_assert_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_BUNDLE);
  g_assert_nonnull (strstr (error->message, dir));
  g_assert_nonnull (strstr (error->message, "never overwritten"));
  g_clear_error (&error);
  g_clear_pointer (&c, airlock_case_free);

  c = airlock_case_new ("oci-archive:/nonexistent/image.tar");
  g_assert_null (airlock_session_start (f->session, c, &error));
  g_assert_true (error->domain == AIRLOCK_IMAGE_ERROR);
  g_assert_nonnull (strstr (error->message, "/nonexistent/image.tar"));
  g_clear_error (&error);

  g_assert_false (airlock_case_allow (c, "allow tcp 10.0.0.0/33", "--allow", &error));
  g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, "--allow:1:"));
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* An assertion that fails ends the test with its report (in a subprocess:
 * no VM, the check's outcome given). */
static void
test_assertion_fails_the_test (void)
{
  if (g_test_subprocess ())
    {
      GError *error = g_error_new_literal (AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                                           "amd64 /x: expected no egress\n  egress attempts:");

      airlock_test_assert_check ("file.c", 7, "func", "airlock_assert_no_egress (r)", FALSE, error);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*airlock_assert_no_egress (r) failed:*expected no egress*egress attempts:*");
}

int
main (int argc, char **argv)
{
  airlock_test_init (&argc, &argv);
  g_test_init (&argc, &argv, NULL);
  sample_dir = g_getenv ("AIRLOCK_SAMPLE_DIR");
  if (!sample_dir)
    g_error ("AIRLOCK_SAMPLE_DIR is not set: run through meson test");
  g_test_add_func ("/case/assertion-fails-the-test", test_assertion_fails_the_test);
  airlock_test_add ("/case/invalid-cases", NULL, test_invalid_cases);
  airlock_test_add ("/case/conversation", NULL, test_conversation);
  airlock_test_add ("/case/egress-reports", NULL, test_egress_reports);
  airlock_test_add ("/case/env-overrides", NULL, test_env_overrides);
  return g_test_run ();
}
