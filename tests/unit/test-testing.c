/* lib/testing without a VM: what a test program's command line does
 * (--help lists airlock's options, a rerun into the same --airlock-out
 * gets a directory of its own) and the egress checks over a result judged
 * under the case's own policy.
 *
 * The result is the case API's own (airlock_result_new()) over a run
 * record made as tests/unit/test-bundle.c makes one: the supervisor's
 * stream from guest/wire.h through a real channel, the sinkhole's records
 * and capture from network-run.h. */
#include "config.h"

#include "case/case-state-private.h"
#include "evidence/channel.h"
#include "fsutil-private.h"
#include "gate/verdict.h"
#include "policy/policy.h"
#include "record/run-record.h"
#include "testing/testing.h"

#include "wire.h"

#include <glib/gstdio.h>
#include <string.h>

#include "network-run.h"

#define HEARTBEAT_MS 1000
#define TOLERANCE_MS 3000
#define T0 1000000
#define REAL0 1700000000000000

static const guint8 test_nonce[AIRLOCK_NONCE_LEN] = {
  0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
  0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
};

/* This program's path, for running it again as a child. */
static const char *self;

static void
feed_event (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  if (frame->type == AIRLOCK_FRAME_EVENT)
    g_assert_true (airlock_event_log_add_frame (user_data, frame, &error));
  g_assert_no_error (error);
}

/* The egress sample's HTTP connection to the address the sinkhole handed
 * out for example.com (the supervisor's connect, the sinkhole's record of
 * `GET /` with Host example.com, and its frames), judged under @rules. */
static AirlockResult *
http_result (const char *rules)
{
  g_autoptr (AirlockChannel) channel = airlock_channel_new (test_nonce, HEARTBEAT_MS, TOLERANCE_MS);
  g_autoptr (AirlockEventLog) log = airlock_event_log_new ();
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (GByteArray) stream = network_run_guest_stream (test_nonce);
  g_autoptr (GBytes) pcap = NULL;
  g_autoptr (GBytes) records = NULL;
  g_autoptr (GError) error = NULL;
  AirlockRunRecord *record;
  NetworkRun n;
  AirlockRunRecordInput run = {
    .arch = AIRLOCK_ARCH_AMD64,
    .complete = TRUE,
    .log = log,
    .timeout_ms = 30000,
    .channel = channel,
    .accel = "tcg",
    .uri = "qemu:///embed",
    .domain_name = "airlock-test",
    .qemu_version = "7.2.0",
    .libvirt_version = "9.0.0",
    .heartbeat_ms = HEARTBEAT_MS,
    .heartbeat_tolerance_ms = TOLERANCE_MS,
  };

  network_run_init (&n);
  network_run_http (&n, "198.18.243.18", "example.com.", "/");
  pcap = network_run_pcap (&n);
  records = network_run_records (&n);
  network_run_clear (&n);
  policy = airlock_policy_parse (rules, strlen (rules), "rules", &error);
  g_assert_no_error (error);
  airlock_channel_set_frame_func (channel, feed_event, log);
  airlock_channel_feed (channel, stream->data, stream->len, T0, REAL0);
  airlock_channel_close (channel, T0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  run.pcap = pcap;
  run.sinkhole_records = records;
  run.trailer = airlock_channel_get_trailer (channel);
  run.guest_log = airlock_channel_get_log (channel);
  record = airlock_run_record_new (&run);
  return airlock_result_new (AIRLOCK_ARCH_AMD64, "/http", NULL,
                             airlock_verdict_compute (record, policy), record);
}

/* The rules a case states once (airlock_case_allow) are what the check
 * holds the attempts to, as the verdict judged them: by the name the
 * address was handed out for, and by the Host the connection sent. */
static void
test_egress_admitted_follows_the_case (void)
{
  g_autoptr (GError) error = NULL;
  AirlockResult *r;

  r = http_result ("allow tcp any port 80 host=example.com");
  g_assert_true (airlock_check_egress_admitted (r, &error));
  g_assert_no_error (error);
  /* NULL rules: the case's own, the same check. */
  g_assert_true (airlock_check_egress_only_to (r, NULL, &error));
  g_assert_no_error (error);
  airlock_result_free (r);

  r = http_result ("allow tcp any port 443 host=example.com");
  g_assert_false (airlock_check_egress_admitted (r, &error));
  g_assert_nonnull (strstr (error->message, "amd64 /http: expected egress only as the case's policy admits"));
  g_assert_nonnull (strstr (error->message, "/usr/local/bin/egress-probe connect inet tcp 198.18.243.18 port 80"));
  g_assert_nonnull (strstr (error->message, "egress not admitted by the policy"));
  g_clear_error (&error);
  g_assert_false (airlock_check_egress_only_to (r, NULL, &error));
  g_clear_error (&error);
  airlock_result_free (r);

  /* A rule for another name admits the address, not the Host it sent. */
  r = http_result ("allow tcp any port 80 host=example.org");
  g_assert_false (airlock_check_egress_admitted (r, &error));
  g_clear_error (&error);
  airlock_result_free (r);
}

/* The result in full (case.h, what `airlock run` and `gate` report from):
 * the verdict the counts come from is the one the result was judged with,
 * the run record is the run's, and a run without an image has none. */
static void
test_result_in_full (void)
{
  g_autoptr (AirlockResult) r = http_result ("allow tcp any port 80 host=example.com");
  const AirlockVerdict *v = airlock_result_get_verdict_details (r);
  const AirlockRunRecord *record = airlock_result_get_record (r);

  g_assert_nonnull (v);
  g_assert_cmpint (v->kind, ==, airlock_result_get_verdict (r));
  g_assert_cmpuint (v->reasons->len, ==, g_strv_length ((GStrv) airlock_result_get_reasons (r)));
  g_assert_cmpuint (v->n_attempts, ==, 1);
  g_assert_cmpuint (v->n_admitted, ==, 1);
  g_assert_nonnull (record);
  g_assert_true (record->complete);
  g_assert_cmpint (record->complete, ==, airlock_result_is_complete (r));
  g_assert_null (airlock_result_get_image (r));
}

/* The last line of @out (the child's answer; the lines before it are
 * the messages it logged). */
static const char *
last_line (char *out)
{
  char *nl;

  g_strchomp (out);
  nl = strrchr (out, '\n');
  return nl ? nl + 1 : out;
}

static char *
run_self (const char *const *args, const char *env_name, const char *env_value, int *ret_status)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (GError) error = NULL;
  char *out = NULL;

  g_ptr_array_add (argv, (gpointer) self);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  envp = g_environ_unsetenv (envp, "AIRLOCK_TEST_OUT");
  if (env_name)
    envp = g_environ_setenv (envp, env_name, env_value, TRUE);
  g_spawn_sync (NULL, (char **) argv->pdata, envp, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                NULL, ret_status, &error);
  g_assert_no_error (error);
  return out;
}

/* --help: GLib's options, then airlock's, then the exit GLib makes. */
static void
test_help_lists_airlock_options (void)
{
  const char *const args[] = { "--help", NULL };
  int status;
  g_autofree char *out = run_self (args, NULL, NULL, &status);
  const char *glib, *ours;

  g_assert_true (g_spawn_check_wait_status (status, NULL));
  glib = strstr (out, "Test Options:");
  ours = strstr (out, "Airlock Options");
  g_assert_nonnull (glib);
  g_assert_nonnull (ours);
  g_assert_true (glib < ours);
  for (const char *const *o = (const char *const[]) { "--airlock-image=REF", "--airlock-arch=LIST",
                                                     "--airlock-out=DIR", "--airlock-connect=URI",
                                                     "--airlock-accel=", "--airlock-clock=", NULL };
       *o; o++)
    if (!strstr (ours, *o))
      g_error ("--help does not list %s:\n%s", *o, out);
}

/* A second run into the same --airlock-out gets DIR/run-1, a third
 * DIR/run-2: each run's bundles are its own, none overwritten. */
static void
test_out_dir_rerun_gets_its_own (void)
{
  g_autofree char *root = g_dir_make_tmp ("airlock-test-testing-XXXXXX", NULL);
  g_autofree char *dir = g_build_filename (root, "bundles", NULL);
  g_autofree char *opt = g_strconcat ("--airlock-out=", dir, NULL);
  g_autofree char *earlier = g_build_filename (dir, "amd64", NULL);
  g_autofree char *run1 = g_build_filename (dir, "run-1", NULL);
  g_autofree char *run2 = g_build_filename (dir, "run-2", NULL);
  const char *const args[] = { opt, NULL };
  g_autofree char *first = NULL, *second = NULL, *third = NULL;
  int status;

  g_assert_nonnull (root);
  first = run_self (args, "AIRLOCK_TEST_PRINT_OUT_DIR", "1", &status);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (last_line (first), ==, dir);
  /* What a run leaves: its bundles under DIR/ARCH. */
  g_assert_cmpint (g_mkdir (earlier, 0755), ==, 0);
  second = run_self (args, "AIRLOCK_TEST_PRINT_OUT_DIR", "1", &status);
  g_assert_cmpstr (last_line (second), ==, run1);
  g_assert_nonnull (strstr (second, "holds an earlier run"));
  g_assert_true (g_file_test (run1, G_FILE_TEST_IS_DIR));
  third = run_self (args, "AIRLOCK_TEST_PRINT_OUT_DIR", "1", &status);
  g_assert_cmpstr (last_line (third), ==, run2);
  airlock_rm_rf (root);
}

int
main (int argc, char **argv)
{
  self = argv[0];
  airlock_test_init (&argc, &argv);
  if (g_getenv ("AIRLOCK_TEST_PRINT_OUT_DIR"))
    {
      const char *dir = airlock_test_get_out_dir ();

      g_print ("%s\n", dir ? dir : "(none)");
      return 0;
    }
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/testing/help-lists-airlock-options", test_help_lists_airlock_options);
  g_test_add_func ("/testing/out-dir-rerun-gets-its-own", test_out_dir_rerun_gets_its_own);
  g_test_add_func ("/testing/egress-admitted-follows-the-case", test_egress_admitted_follows_the_case);
  g_test_add_func ("/testing/result-in-full", test_result_in_full);
  return g_test_run ();
}
