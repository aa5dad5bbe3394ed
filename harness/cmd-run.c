/* airlock run: boot a guest, run one of the test programs under the
 * supervisor, and print what it tried: every traced call with its socket,
 * destination, DNS names and outcome, what the sinkhole served it (names
 * asked, addresses handed out, each connection and what it sent), the
 * processes it started, how it ended.  `airlock gate` is this command with
 * the controls and a policy (run_command with cmd-gate.c's verdict report);
 * its verdict table is cmd-gate.c's, handed in as a function. */
#include "config.h"

#include "harness.h"
#include "cmd-run.h"
#include "network-table.h"
#include "run-report.h"
#include "table.h"

#include <gio/gunixinputstream.h>
#include <json-glib/json-glib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#define DEFAULT_TIMEOUT_S 30
#define MAX_TIMEOUT_S 86400
#define MAX_GUEST_TIME_S (7 * 86400)

static gboolean
is_exec (const AirlockEvent *ev)
{
  return ev->syscall_name != NULL
         && (g_str_equal (ev->syscall_name, "execve") || g_str_equal (ev->syscall_name, "execveat"));
}

static char *
process_cell (const AirlockEvent *ev)
{
  const char *exe = ev->exe ? ev->exe : NULL;
  const char *base = exe ? strrchr (exe, '/') : NULL;
  guint32 pid = ev->has_nspid ? ev->nspid : ev->pid;

  base = base ? base + 1 : exe;
  return g_strdup_printf ("%s[%u]", base && *base ? base : "?", pid);
}

static char *
syscall_cell (const AirlockEvent *ev)
{
  return ev->foreign_abi ? g_strdup_printf ("%s:%s", ev->abi, ev->syscall_name)
                         : g_strdup (ev->syscall_name);
}

static char *
dns_cell (const AirlockEvent *ev)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < ev->dns->len; i++)
    {
      const AirlockDnsQuery *q = ev->dns->pdata[i];

      for (guint j = 0; j < q->questions->len; j++)
        {
          const AirlockDnsQuestion *question = q->questions->pdata[j];

          if (out->len)
            g_string_append_c (out, ',');
          g_string_append (out, question->name);
        }
    }
  if (out->len == 0)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

static void
attempt_row (Table *t, const AirlockEvent *ev)
{
  const AirlockSockaddr *dest = airlock_event_get_destination (ev);
  char *cells[8] = { NULL };

  cells[0] = process_cell (ev);
  cells[1] = syscall_cell (ev);
  if (ev->has_socket)
    {
      g_autofree char *triple = airlock_socket_triple_to_string ((int) ev->sock_family,
                                                                 (int) ev->sock_type,
                                                                 (int) ev->sock_protocol);
      const char *slash = strchr (triple, '/');

      cells[2] = airlock_socket_family_to_string ((int) ev->sock_family);
      cells[3] = g_strdup (slash ? slash + 1 : triple);
    }
  if (dest)
    {
      cells[4] = airlock_sockaddr_to_string (dest);
      if (dest->effect == AIRLOCK_SOCKADDR_ADDRESS
          && (dest->family == AF_INET || dest->family == AF_INET6))
        cells[5] = g_strdup_printf ("%u", dest->inet.port);
    }
  else if ((ev->addr && !ev->addr_decoded) || (ev->peer && !ev->peer_decoded))
    cells[4] = g_strdup ("? (does not decode)");
  cells[6] = dns_cell (ev);
  cells[7] = airlock_event_outcome (ev);
  table_add (t, cells);
}

/* ---- one run ---- */

/* What the sinkhole served the run, host-side (network.jsonl in a
 * bundle): the names asked, the addresses handed out, each connection and
 * what it sent.  The controls' records are told apart by @verdict's keys. */
static void
print_network (AirlockArch arch, const AirlockRunRecord *record, const AirlockVerdict *verdict)
{
  g_autoptr (GPtrArray) controls = g_ptr_array_new ();
  g_autoptr (AirlockNetworkReport) report = NULL;

  if (!record->sinkhole)
    {
      /* Records lost or unreadable (the verdict's reason too); a run no
       * sinkhole served has nothing to say here. */
      if (record->sinkhole_served)
        fprintf (harness_out (), "%s: network: no records: %s\n", airlock_arch_to_string (arch),
                 record->sinkhole_error ? record->sinkhole_error : "no reason given");
      return;
    }
  for (guint i = 0; verdict && i < verdict->controls->len; i++)
    g_ptr_array_add (controls, ((AirlockControlResult *) verdict->controls->pdata[i])->key);
  report = airlock_network_report_new (record->sinkhole, controls);
  network_tables_print (airlock_arch_to_string (arch), report);
}

static void
print_report (AirlockArch arch, const AirlockRunRecord *record, const AirlockVerdict *verdict)
{
  GPtrArray *events = record->events;
  const AirlockTrailer *trailer = record->has_trailer ? &record->trailer : NULL;
  const AirlockEvent *exit_ev = NULL;
  static const char *const attempt_header[] = {
    "process", "syscall", "family", "type/protocol", "destination", "port", "DNS name",
    "outcome", NULL,
  };
  /* pid: in the workload's namespace (what `ps` there shows); guest pid
   * and ppid: in the guest's, where a parent outside the namespace lives. */
  static const char *const process_header[] = {
    "pid", "guest pid", "guest ppid", "executes", "argv", "caller", NULL,
  };
  Table attempts, processes;
  guint n_attempts = 0, n_processes = 0;

  /* The negative controls' records first, in a table of their own: they
   * are ours, not the workload's. */
  {
    Table controls;
    guint n_controls = 0;

    table_init (&controls, attempt_header);
    for (guint i = 0; events && i < events->len; i++)
      {
        const AirlockEvent *ev = events->pdata[i];

        if (ev->phase == AIRLOCK_PHASE_CONTROLS && ev->kind == AIRLOCK_EVENT_SYSCALL && !is_exec (ev))
          {
            attempt_row (&controls, ev);
            n_controls++;
          }
      }
    if (n_controls > 0)
      {
        fprintf (harness_out (), "%s: negative controls, as the supervisor saw them (%u)\n",
                 airlock_arch_to_string (arch), n_controls);
        table_print (&controls, "  ");
      }
    else
      g_ptr_array_unref (controls.rows);
  }

  table_init (&attempts, attempt_header);
  table_init (&processes, process_header);
  for (guint i = 0; events && i < events->len; i++)
    {
      const AirlockEvent *ev = events->pdata[i];

      if (ev->phase == AIRLOCK_PHASE_CONTROLS)
        continue;
      if (ev->kind == AIRLOCK_EVENT_WORKLOAD_EXIT)
        exit_ev = ev;
      if (ev->kind != AIRLOCK_EVENT_SYSCALL)
        continue;
      if (is_exec (ev))
        {
          char *cells[6];

          cells[0] = ev->has_nspid ? g_strdup_printf ("%u", ev->nspid) : NULL;
          cells[1] = ev->has_pid ? g_strdup_printf ("%u", ev->pid) : NULL;
          cells[2] = ev->has_ppid ? g_strdup_printf ("%u", ev->ppid) : NULL;
          cells[3] = g_strdup (ev->path);
          cells[4] = ev->exec_argv ? argv_text ((const char *const *) ev->exec_argv) : NULL;
          cells[5] = g_strdup (ev->exe);
          table_add (&processes, cells);
          n_processes++;
          continue;
        }
      attempt_row (&attempts, ev);
      n_attempts++;
    }

  fprintf (harness_out (), "%s: attempts (%u)\n", airlock_arch_to_string (arch), n_attempts);
  if (n_attempts > 0)
    table_print (&attempts, "  ");
  else
    g_ptr_array_unref (attempts.rows);
  print_network (arch, record, verdict);
  fprintf (harness_out (), "%s: processes (%u)\n", airlock_arch_to_string (arch), n_processes);
  if (n_processes > 0)
    table_print (&processes, "  ");
  else
    g_ptr_array_unref (processes.rows);

  if (exit_ev)
    {
      g_autofree char *status = airlock_wait_status_to_string (exit_ev->exit_status);

      fprintf (harness_out (), "%s: workload %s\n", airlock_arch_to_string (arch), status);
    }
  else
    fprintf (harness_out (), "%s: workload exit not reported\n", airlock_arch_to_string (arch));
  if (trailer)
    fprintf (harness_out (), "%s: end: %s\n", airlock_arch_to_string (arch),
             run_report_end_reason (trailer->end_reason));
  else
    fprintf (harness_out (), "%s: end: no trailer\n", airlock_arch_to_string (arch));
  /* A warped clock covers hours of the guest's time in seconds of ours:
   * say how much of each the workload was watched for. */
  if (record->observed_guest_ms >= 0 && record->observed_wall_ms >= 0)
    fprintf (harness_out (),
             "%s: clock: %s; the workload was watched for %.1f s of guest time in %.1f s\n",
             airlock_arch_to_string (arch), record->clock_warp ? "warp" : "real",
             (double) record->observed_guest_ms / 1000.0, (double) record->observed_wall_ms / 1000.0);
  else
    fprintf (harness_out (),
             "%s: clock: %s\n", airlock_arch_to_string (arch), record->clock_warp ? "warp" : "real");
  {
    const AirlockGuestHello *hello = record->channel ? airlock_channel_get_hello (record->channel) : NULL;
    const char *recorder = hello ? airlock_recorder_to_string (hello->recorder) : NULL;

    if (recorder)
      fprintf (harness_out (), "%s: recorder: %s\n", airlock_arch_to_string (arch), recorder);
  }
}

/* With --stdin -: the workload's output as it comes, on our stdout and
 * stderr, unchanged (a conversation with a stdio server reads naturally).
 * Under --json (@user_data non-NULL) all of it on stderr: stdout holds
 * JSON lines only, and the output comes again in its "output" lines. */
static void
live_output (int stream, const guint8 *data, gsize len, gpointer user_data)
{
  FILE *f = stream == AIRLOCK_STDIO_STDERR || user_data ? stderr : stdout;

  fwrite (data, 1, len, f);
  fflush (f);
}

/* The workload's own output, after the tables, each stream under its name
 * (only when it wrote something). */
static void
print_output (AirlockArch arch, const AirlockRunRecord *record)
{
  GBytes *streams[2] = { record->stdout_bytes, record->stderr_bytes };
  static const char *const names[2] = { "stdout", "stderr" };

  for (int i = 0; i < 2; i++)
    {
      gsize len, start = 0;
      const char *data = g_bytes_get_data (streams[i], &len);

      if (len == 0)
        continue;
      fprintf (harness_out (),
               "%s: %s (%" G_GSIZE_FORMAT " bytes%s):\n", airlock_arch_to_string (arch), names[i],
               len, record->output_truncated ? ", truncated" : "");
      /* Line by line, each escaped: the workload's bytes cannot move the
       * terminal's cursor or pass for our lines. */
      while (start < len)
        {
          const char *nl = memchr (data + start, '\n', len - start);
          gsize end = nl ? (gsize) (nl - data) : len;
          g_autofree char *line = airlock_evidence_escape_bytes ((const guint8 *) data + start,
                                                                 end - start);

          fprintf (harness_out (), "  | %s\n", line);
          start = end + 1;
        }
    }
}

/* With --out: the set the arches' bundles make (lib/bundle/bundle-set.c),
 * written once every arch has ended. */
typedef struct {
  char *gate_id;
  char *reference;      /* the image as the first arch resolved it */
  char *index_digest;
} BundleSet;

static void
bundle_set_clear (BundleSet *set)
{
  g_free (set->gate_id);
  g_free (set->reference);
  g_free (set->index_digest);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BundleSet, bundle_set_clear)

/* The exit status for an error of airlock_session_new() / _start(). */
static int
exit_for_start_error (const GError *error)
{
  if (error->domain == AIRLOCK_IMAGE_ERROR)
    return harness_exit_for_image_error (error);
  if (error->domain == AIRLOCK_RUN_SPEC_ERROR || error->domain == AIRLOCK_POLICY_ERROR
      || g_error_matches (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID)
      || g_error_matches (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_BUNDLE))
    return HARNESS_EXIT_USAGE;
  return HARNESS_EXIT_SETUP;
}

/* One arch's run once started: its session and run, or the exit status
 * that ended it before. */
typedef struct {
  AirlockSession *session;
  AirlockRun *run;
  int status;
} StartedCase;

static void
started_case_clear (StartedCase *st)
{
  g_clear_pointer (&st->run, airlock_run_free);
  g_clear_pointer (&st->session, airlock_session_free);
}

/* One arch: the case on its session, started (the image and its disk
 * prepared, the VM booting in the run's thread).  @st->run is NULL when it
 * could not start, and @st->status says why. */
static void
start_case (RunReport *r, AirlockArch arch, const AirlockSessionOptions *session_opts,
            AirlockCase *c, const char *out_dir, StartedCase *st)
{
  g_autoptr (GError) error = NULL;
  const char *arch_name = airlock_arch_to_string (arch);
  AirlockVm *vm;
  GPtrArray *swept;

  st->session = NULL;
  st->run = NULL;
  st->status = HARNESS_EXIT_OK;
  if (out_dir)
    {
      g_autofree char *dir = g_build_filename (out_dir, arch_name, NULL);

      airlock_case_set_bundle_dir (c, dir);
    }
  st->session = airlock_session_new (arch, session_opts, &error);
  harness_progress_done ();
  if (!st->session)
    {
      run_report_error (r, arch, "%s: %s", arch_name, error->message);
      st->status = HARNESS_EXIT_SETUP;
      return;
    }
  st->run = airlock_session_start (st->session, c, &error);
  harness_progress_done ();
  if (!st->run)
    {
      run_report_error (r, arch, "%s: %s", arch_name, error->message);
      st->status = exit_for_start_error (error);
      return;
    }
  vm = airlock_run_get_vm (st->run);
  swept = airlock_vm_get_swept (vm);
  for (guint i = 0; i < swept->len; i++)
    fprintf (harness_err (), "airlock: removed domain '%s' left behind by a crashed run\n",
             (const char *) swept->pdata[i]);
  if (airlock_vm_get_accel_notice (vm))
    fprintf (harness_err (), "airlock: %s: %s\n", arch_name, airlock_vm_get_accel_notice (vm));
  fprintf (harness_err (), "airlock: %s: running %s (%s, %s)\n", arch_name,
           airlock_run_get_argv (st->run)[0], airlock_vm_get_accel (vm), airlock_vm_get_uri (vm));
}

/* One started arch to its end: the report, the bundle.  Returns the exit
 * status for this arch; the result goes to @r when @keep. */
static int
finish_case (RunReport *r, AirlockArch arch, StartedCase *st, gboolean keep, BundleSet *set,
             gboolean live)
{
  g_autoptr (AirlockResult) result = NULL;
  g_autoptr (GError) error = NULL;
  const char *arch_name = airlock_arch_to_string (arch);
  const AirlockImage *oci;
  const AirlockRunRecord *record;
  GPtrArray *log;
  gboolean complete;
  const AirlockTrailer *trailer;
  int status;

  if (!st->run)
    {
      started_case_clear (st);
      return st->status;
    }
  result = airlock_run_wait (st->run, &error);
  if (!result)
    {
      run_report_error (r, arch, "%s: %s", arch_name, error->message);
      started_case_clear (st);
      return HARNESS_EXIT_SETUP;
    }
  record = airlock_result_get_record (result);
  oci = airlock_result_get_image (result);
  complete = record->complete;
  trailer = record->has_trailer ? &record->trailer : NULL;
  /* The header goes where the report goes: on stdout for the table, on
   * stderr with --json so stdout stays one JSON object per line. */
  fprintf (r->text, "%s: %s, %s%s%s\n", arch_name, record->accel,
           complete ? "run complete" : "run inconclusive",
           complete ? "" : ": ", complete ? "" : record->incomplete_reason);
  if (oci)
    fprintf (r->text, "%s: image %s\n  index    %s\n  manifest %s\n  config   %s\n",
             arch_name, oci->reference, oci->index_digest ? oci->index_digest : "(none)",
             oci->manifest_digest, oci->config_digest);
  if (oci && set && !set->reference)
    {
      set->reference = g_strdup (oci->reference);
      set->index_digest = g_strdup (oci->index_digest);
    }
  if (r->json)
    run_report_json_run (arch, result);
  else
    print_report (arch, record, airlock_result_get_verdict_details (result));
  if (!r->json && !live)
    print_output (arch, record);

  /* What the guest's trusted programs said: why a spec was refused, why
   * the supervisor gave up. */
  log = record->guest_log;
  if (!complete || (trailer && trailer->end_reason == AIRLOCK_END_ERROR))
    for (guint i = 0; i < log->len; i++)
      fprintf (harness_err (), "airlock: %s: guest: %s\n", arch_name, (const char *) log->pdata[i]);
  if (!complete)
    {
      gsize len;
      const char *data = g_bytes_get_data (record->console, &len);
      gsize from = len > 2000 ? len - 2000 : 0;

      fprintf (harness_err (), "airlock: %s: console tail:\n%.*s\n", arch_name, (int) (len - from),
               data + from);
    }
  status = complete ? HARNESS_EXIT_OK : HARNESS_EXIT_INCONCLUSIVE;
  fflush (harness_out ());
  if (airlock_result_get_bundle_dir (result))
    {
      /* Lost evidence is an error whatever the verdict: the pipeline must
       * not publish on a run it cannot show. */
      if (airlock_result_get_bundle_error (result))
        {
          run_report_error (r, arch, "%s: the bundle '%s' is incomplete: %s", arch_name,
                            airlock_result_get_bundle_dir (result),
                            airlock_result_get_bundle_error (result));
          status = HARNESS_EXIT_SETUP;
        }
      else
        fprintf (harness_err (), "airlock: %s: evidence bundle in %s\n", arch_name,
                 airlock_result_get_bundle_dir (result));
    }
  fflush (harness_out ());
  if (keep)
    {
      g_clear_pointer (&r->results[arch], airlock_result_free);
      r->results[arch] = g_steal_pointer (&result);
    }
  started_case_clear (st);
  return status;
}

static int run_main (RunReport *r, RunVerdictReport verdicts, int argc, char **argv,
                     char **ret_junit);

/* run and gate: the runs (run_main), then what is written once every arch
 * has ended and the exit status is known: the --json summary as the last
 * line, the --junit file, GitHub's annotations. */
int
run_command (int argc, char **argv, RunVerdictReport verdicts)
{
  return run_command_item (argc, argv, verdicts, NULL);
}

int
run_command_item (int argc, char **argv, RunVerdictReport verdicts, RunListItem *item)
{
  gboolean gate_mode = verdicts != NULL;
  RunReport r;
  g_autofree char *junit = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  run_report_init (&r, gate_mode);
  status = run_main (&r, verdicts, argc, argv, &junit);
  /* Only a gate that ran has testcases: an error before any boot is
   * the exit status and its message. */
  if (item && item->junit && r.ran)
    run_report_junit_suite (&r, item->junit, &item->junit_tests, &item->junit_failures,
                            &item->junit_errors);
  else if (junit && r.ran)
    {
      if (!run_report_write_junit (&r, junit, &error))
        {
          run_report_error (&r, -1, "%s", error->message);
          status = MAX (status, HARNESS_EXIT_SETUP);
        }
    }
  if (item)
    {
      item->ran = r.ran;
      item->verdict = run_report_overall_verdict (&r);
      for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
        item->arch_verdicts[a] = r.arches_known && r.arches[a] && r.gate && r.ran
                                 ? run_report_arch_verdict (&r, (AirlockArch) a) : NULL;
    }
  if (r.json)
    run_report_json_summary (&r, item ? "image-summary" : "summary", status);
  else if (gate_mode && r.ran && g_strcmp0 (g_getenv ("GITHUB_ACTIONS"), "true") == 0)
    /* Not under --json: stdout holds JSON lines only. */
    run_report_github_annotations (&r);
  run_report_clear (&r);
  return status;
}

int
cmd_run (int argc, char **argv)
{
  return run_command (argc, argv, NULL);
}

static int
run_main (RunReport *r, RunVerdictReport verdicts, int argc, char **argv, char **ret_junit)
{
  gboolean gate_mode = r->gate;
  g_autofree char *policy_file = NULL;
  g_autofree char *test_mode = NULL;
  g_auto (GStrv) allow_rules = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_auto (BundleSet) set = { NULL };
  g_autofree char *arch_spec = NULL;
  g_auto (GStrv) uris = NULL;
  int host_slots = 0;
  g_autofree char *accel_name = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *program = NULL;
  g_autofree char *image_ref = NULL;
  g_auto (GStrv) image_refs = NULL;
  g_autofree char *images_file = NULL;
  g_autofree char *stdin_file = NULL;
  g_autofree char *out_dir = NULL;
  g_autofree char *key_file = NULL;
  g_autofree char *case_name = NULL;
  g_autofree char *max_image_size = NULL;
  g_autofree char *clock_name = NULL;
  gboolean controls = FALSE;
  g_autoptr (GBytes) stdin_data = NULL;
  g_autoptr (GBytes) key = NULL;
  g_autoptr (GInputStream) stdin_stream = NULL;
  g_autoptr (AirlockCase) c = NULL;
  g_auto (GStrv) serve = NULL;
  int timeout_s = DEFAULT_TIMEOUT_S;
  int guest_time_s = HARNESS_GUEST_TIME_UNSET;
  int boot_timeout = 60;
  AirlockClock clock = AIRLOCK_CLOCK_WARP;
  gboolean arches[AIRLOCK_N_ARCHES];
  AirlockAccel accel = AIRLOCK_ACCEL_AUTO;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GPtrArray) workload_argv = g_ptr_array_new_with_free_func (g_free);
  int n_opts = argc;
  int status = HARNESS_EXIT_OK;
  AirlockSessionOptions session_opts = { 0 };
  StartedCase started[AIRLOCK_N_ARCHES] = { { NULL } };
  gboolean sequential = FALSE, parallel;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec,
      gate_mode ? "amd64, arm64, all (both at once; the default) or a comma-separated list; x86_64 and aarch64 name the same"
                : "amd64, arm64, all (both at once) or a comma-separated list; x86_64 and aarch64 name the same", "ARCH" },
    { "sequential", 0, 0, G_OPTION_ARG_NONE, &sequential,
      "with --arch all: one arch after the other instead of both at once", NULL },
    { "image", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &image_refs,
      gate_mode ? "OCI image to gate: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE, "
                  "docker://NAME[:TAG|@DIGEST] or containers-storage:NAME; repeatable (a gate over "
                  "each, one after the other)"
                : "OCI image to run: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE, "
                  "docker://NAME[:TAG|@DIGEST] or containers-storage:NAME", "REF" },
    /* Taken apart by cmd-gate.c before it reaches here; listed for --help. */
    { "images", 0, gate_mode ? 0 : G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &images_file,
      "gate: every image listed in FILE too, one reference a line ('#' comments); with --out, "
      "each image's bundles in DIR/NN-NAME/", "FILE" },
    /* Each command's --help lists only what it accepts: the gate refuses a
     * test program and always runs the controls; only it judges. */
    { "guest-program", 'p', gate_mode ? G_OPTION_FLAG_HIDDEN : 0, G_OPTION_ARG_STRING, &program,
      "test program to run instead: /bin/NAME in the guest's testroot", "NAME" },
    { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout_s,
      "end the workload after S seconds (default: 30): of wall time under --clock warp, of guest time under --clock real", "S" },
    { "clock", 0, 0, G_OPTION_ARG_STRING, &clock_name,
      "the guest's clock: warp (default; it runs ahead while the guest is idle, so a sleep passes at once; TCG only) or real", "CLOCK" },
    { "guest-time", 0, 0, G_OPTION_ARG_INT, &guest_time_s,
      "with --clock warp: end the workload after S seconds of guest time too (default: 21600, six hours)", "S" },
    { "stdin", 0, 0, G_OPTION_ARG_FILENAME, &stdin_file,
      "feed FILE to the workload's stdin (default: end of file at once; - reads ours)", "FILE" },
    { "controls", 0, gate_mode ? G_OPTION_FLAG_HIDDEN : 0, G_OPTION_ARG_NONE, &controls,
      "run the negative controls first, in the same boot (listed as their own attempts)", NULL },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "write each arch's evidence bundle to DIR/ARCH/ (docs/bundle.md; never overwritten)", "DIR" },
    { "key-file", 0, 0, G_OPTION_ARG_FILENAME, &key_file,
      "with --out: sign each bundle's manifest with HMAC-SHA256 under the key in FILE", "FILE" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &case_name, "a name for the case in reports and bundles", "NAME" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &r->json,
      "print JSON Lines only on stdout, the last a summary (docs/json.md); text goes to stderr", NULL },
    { "junit", 0, gate_mode ? 0 : G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, ret_junit,
      "gate: write a JUnit XML report to FILE, one testcase per arch", "FILE" },
    { "connect", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &uris,
      "libvirt URI (default: $AIRLOCK_CONNECT, else the embedded driver); several: a pool of "
      "hypervisors, each arch on the first that can run it with a free slot "
      "(qemu:///embed: the embedded driver)", "URI" },
    { "host-slots", 0, 0, G_OPTION_ARG_INT, &host_slots,
      "with a pool: runs at once on each host (default: 1)", "N" },
    { "accel", 0, 0, G_OPTION_ARG_STRING, &accel_name, "auto, tcg or kvm (default: auto)", "ACCEL" },
    { "boot-timeout", 0, 0, G_OPTION_ARG_INT, &boot_timeout, "seconds from start to hello (default: 60)", "S" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { "max-image-size", 0, 0, G_OPTION_ARG_STRING, &max_image_size,
      "the most the image's layers may decompress to, all together, e.g. 20G (default: $AIRLOCK_MAX_IMAGE_SIZE, else 8G); over it: exit 17", "SIZE" },
    { "test-mode", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &test_mode, "guest misbehaviour, for tests", "MODE" },
    { "policy", 0, gate_mode ? 0 : G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &policy_file, "gate: the allow-list (docs/policy.md; default: no egress)", "FILE" },
    { "serve", 0, 0, G_OPTION_ARG_STRING_ARRAY, &serve, HARNESS_SERVE_HELP, "NAME:PORT=FILE" },
    { "allow", 0, gate_mode ? 0 : G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING_ARRAY, &allow_rules, "gate: one more allow rule, e.g. 'allow tcp 10.0.0.0/8 port 443' (repeatable)", "RULE" },
    { NULL },
  };

  /* Everything after "--" is the workload's, untouched by option parsing. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        n_opts = i;
        for (int j = i + 1; j < argc; j++)
          g_ptr_array_add (workload_argv, g_strdup (argv[j]));
        break;
      }

  ctx = g_option_context_new (gate_mode
                              ? "- the release gate: run an image on each arch with the negative "
                                "controls and judge it [-- ARGS]"
                              : "- run an image or a test program under the supervisor [-- ARGS]");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &n_opts, &argv, &error))
    {
      run_report_error (r, -1, "%s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (r->json)
    r->text = harness_err ();
  /* A gate over several images never gets here (cmd-gate.c runs each
   * alone); `airlock run` takes one. */
  if (images_file || (image_refs && g_strv_length (image_refs) > 1))
    {
      run_report_error (r, -1, gate_mode ? "one --image per run here"
                                         : "one --image: a list of images is 'airlock gate'");
      return HARNESS_EXIT_USAGE;
    }
  if (image_refs)
    image_ref = g_strdup (image_refs[0]);
  if (*ret_junit && !gate_mode)
    {
      run_report_error (r, -1, "--junit belongs to 'airlock gate'");
      return HARNESS_EXIT_USAGE;
    }
  if (*ret_junit)
    {
      g_autofree char *parent = g_path_get_dirname (*ret_junit);

      /* Found out now, not after the boots. */
      if (!g_file_test (parent, G_FILE_TEST_IS_DIR))
        {
          run_report_error (r, -1, "--junit: '%s' is not a directory to write '%s' in", parent,
                            *ret_junit);
          return HARNESS_EXIT_USAGE;
        }
    }
  if (n_opts > 1)
    {
      run_report_error (r, -1, "unexpected argument '%s' (the program's arguments go after --)",
               argv[1]);
      return HARNESS_EXIT_USAGE;
    }
  if (max_image_size && !airlock_image_parse_size (max_image_size, &session_opts.max_image_bytes, &error))
    {
      run_report_error (r, -1, "--max-image-size: %s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (!arch_spec && gate_mode)
    arch_spec = g_strdup ("all");   /* a release is gated on every arch */
  if (!arch_spec)
    {
      run_report_error (r, -1, "--arch is required (amd64, arm64, all or a comma-separated list)");
      return HARNESS_EXIT_USAGE;
    }
  if (gate_mode)
    {
      if (!image_ref || program)
        {
          run_report_error (r, -1, "--image REF is required (a test program cannot be gated)");
          return HARNESS_EXIT_USAGE;
        }
      controls = TRUE;
      policy = policy_file ? airlock_policy_load (policy_file, &error) : airlock_policy_new_default ();
      for (guint i = 0; policy && allow_rules && allow_rules[i]; i++)
        if (!airlock_policy_append (policy, allow_rules[i], strlen (allow_rules[i]), "--allow", &error))
          g_clear_pointer (&policy, airlock_policy_free);
      if (!policy)
        {
          run_report_error (r, -1, "%s", error->message);
          return HARNESS_EXIT_USAGE;
        }
    }
  else if (policy_file || allow_rules)
    {
      run_report_error (r, -1, "--policy and --allow belong to 'airlock gate'");
      return HARNESS_EXIT_USAGE;
    }
  if (key_file && !out_dir)
    {
      run_report_error (r, -1, "--key-file signs the bundles of --out DIR: give --out too");
      return HARNESS_EXIT_USAGE;
    }
  if (!harness_parse_arches (arch_spec, arches, &error))
    {
      run_report_error (r, -1, "%s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  memcpy (r->arches, arches, sizeof r->arches);
  r->arches_known = TRUE;
  if (!image_ref == !program)
    {
      run_report_error (r, -1, "give either --image REF or --guest-program NAME");
      return HARNESS_EXIT_USAGE;
    }
  if (program && (!*program || strchr (program, '/') || g_str_equal (program, ".")
                  || g_str_equal (program, "..")))
    {
      run_report_error (r, -1, "--guest-program needs the NAME of a program in the testroot's "
               "/bin, e.g. --guest-program connect-v4");
      return HARNESS_EXIT_USAGE;
    }
  if (accel_name && !airlock_accel_from_string (accel_name, &accel))
    {
      run_report_error (r, -1, "unknown accelerator '%s' (expected auto, tcg or kvm)", accel_name);
      return HARNESS_EXIT_USAGE;
    }
  if (timeout_s <= 0 || timeout_s > MAX_TIMEOUT_S || boot_timeout <= 0 || boot_timeout > MAX_TIMEOUT_S)
    {
      run_report_error (r, -1, "--timeout and --boot-timeout must be 1 to %d seconds",
               MAX_TIMEOUT_S);
      return HARNESS_EXIT_USAGE;
    }
  if (host_slots < 0 || host_slots > 64)
    {
      run_report_error (r, -1, "--host-slots must be 1 to 64 runs at once per host");
      return HARNESS_EXIT_USAGE;
    }
  if (!harness_parse_clock (r->command, clock_name, accel, guest_time_s, MAX_GUEST_TIME_S, &clock))
    {
      /* Printed already; the summary still says why. */
      g_ptr_array_add (r->errors, g_strdup ("invalid --clock, --guest-time or --accel"));
      return HARNESS_EXIT_USAGE;
    }
  if (key_file && !(key = airlock_bundle_key_load (key_file, &error)))
    {
      run_report_error (r, -1, "--key-file: %s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (out_dir)
    for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
      {
        g_autofree char *dir = g_build_filename (out_dir, airlock_arch_to_string ((AirlockArch) a), NULL);

        /* Refused before any run, not after the first. */
        if (arches[a] && g_file_test (dir, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
          {
            run_report_error (r, -1, "'%s' exists; a bundle is never overwritten", dir);
            return HARNESS_EXIT_USAGE;
          }
      }
  if (out_dir)
    {
      g_autofree char *record = g_build_filename (out_dir, AIRLOCK_BUNDLE_SET_FILE, NULL);

      /* One directory, one set: a second gate's bundles beside the first's
       * would not verify as either's. */
      if (g_file_test (record, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        {
          run_report_error (r, -1, "'%s' exists; a gate's set of bundles is never "
                   "overwritten", record);
          return HARNESS_EXIT_USAGE;
        }
      set.gate_id = airlock_bundle_set_new_id ();
    }

  if (stdin_file)
    {
      g_autofree char *contents = NULL;
      gsize len = 0;

      if (g_str_equal (stdin_file, "-") && arches[AIRLOCK_ARCH_AMD64] && arches[AIRLOCK_ARCH_ARM64])
        {
          run_report_error (r, -1, "--stdin - streams one input: give one --arch "
                   "(or a file, which each arch gets whole)");
          return HARNESS_EXIT_USAGE;
        }
      if (g_str_equal (stdin_file, "-"))
        /* Streamed as it comes, and the workload's output printed live:
         * a stdio server can be spoken to from a terminal or a pipe. */
        stdin_stream = g_unix_input_stream_new (STDIN_FILENO, FALSE);
      else if (!g_file_get_contents (stdin_file, &contents, &len, &error))
        {
          run_report_error (r, -1, "--stdin: %s", error->message);
          return HARNESS_EXIT_USAGE;
        }
      else
        stdin_data = g_bytes_new_take (g_steal_pointer (&contents), len);
    }

  g_ptr_array_add (workload_argv, NULL);
  c = airlock_case_new (image_ref);
  if (program)
    airlock_case_set_guest_program (c, program);
  airlock_case_set_name (c, case_name);
  airlock_case_set_args (c, (const char *const *) workload_argv->pdata);
  airlock_case_set_timeout (c, (guint) timeout_s);
  if (guest_time_s > 0)
    airlock_case_set_guest_time (c, (guint) guest_time_s);
  airlock_case_set_controls (c, controls);
  if (!harness_apply_serve (c, (const char *const *) serve, NULL, &error))
    {
      run_report_error (r, -1, "%s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (policy)
    airlock_case_set_policy (c, policy);
  /* Without --stdin the workload reads end of file at once, as before. */
  airlock_case_set_stdin_bytes (c, stdin_data);
  if (!stdin_data && !stdin_stream)
    {
      g_autoptr (GBytes) empty = g_bytes_new_static ("", 0);

      airlock_case_set_stdin_bytes (c, empty);
    }
  if (stdin_stream)
    {
      airlock_case_set_stdin_stream (c, stdin_stream);
      airlock_case_set_output_func (c, live_output, r->json ? r : NULL);
    }
  airlock_case_set_bundle_key (c, key);
  airlock_case_set_bundle_gate (c, set.gate_id);
  airlock_case_set_test_mode (c, test_mode);
  /* Every arch's image resolved (its index, manifest and config read and
   * checked, its command found) before anything boots: a mistyped
   * reference is one message, and an arch the image lacks is found before
   * the other arch's boot rather than after it.  The runs resolve it
   * again, as they would any reference. */
  if (image_ref)
    {
      g_autoptr (AirlockImageSource) source = airlock_image_source_open (image_ref, &error);
      int image_status = HARNESS_EXIT_OK;
      const char *const *args = workload_argv->len > 1 ? (const char *const *) workload_argv->pdata
                                                       : NULL;

      if (!source)
        {
          run_report_error (r, -1, "%s", error->message);
          return harness_exit_for_image_error (error);
        }
      for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
        {
          if (arches[a] && !harness_image_runs_on (source, (AirlockArch) a, args, &error))
            {
              run_report_error (r, (int) a, "%s: %s", airlock_arch_to_string ((AirlockArch) a),
                                error->message);
              if (image_status == HARNESS_EXIT_OK)
                image_status = harness_exit_for_image_error (error);
              g_clear_error (&error);
            }
        }
      if (image_status != HARNESS_EXIT_OK)
        return image_status;
    }

  session_opts.uris = (const char *const *) uris;
  session_opts.host_slots = (guint) host_slots;
  r->pool = (uris && g_strv_length (uris) >= 2)
            || (!uris && g_getenv ("AIRLOCK_CONNECT")
                && strpbrk (g_getenv ("AIRLOCK_CONNECT"), " \t\n"));
  session_opts.cache_dir = cache_dir;
  session_opts.accel = accel;
  session_opts.clock = clock;
  session_opts.boot_timeout_ms = (guint) boot_timeout * 1000;
  session_opts.progress = harness_progress;

  /* Both arches at once unless --sequential: each VM is a QEMU of its own
   * (one vCPU thread under TCG), so on a machine with two cores they take
   * little more than the slower one alone (bench/parallel).  Each starts in
   * turn (image, disk, boot begun), then each is waited for and reported in
   * arch order, so the output reads as it does one after the other. */
  parallel = !sequential && arches[AIRLOCK_ARCH_AMD64] && arches[AIRLOCK_ARCH_ARM64];
  r->ran = TRUE;
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (arches[a])
      {
        int s;

        start_case (r, (AirlockArch) a, &session_opts, c, out_dir, &started[a]);
        if (parallel && started[a].run)
          continue;
        s = finish_case (r, (AirlockArch) a, &started[a], TRUE, &set, stdin_stream != NULL);
        /* Usage beats setup beats inconclusive: the most actionable. */
        if (s == HARNESS_EXIT_USAGE)
          {
            for (unsigned b = 0; b < a; b++)
              if (started[b].run)
                {
                  airlock_vm_cancel (airlock_run_get_vm (started[b].run),
                                     "another arch's case is malformed");
                  finish_case (r, (AirlockArch) b, &started[b], FALSE, NULL, FALSE);
                }
            return s;
          }
        status = MAX (status, s);
      }
  for (unsigned a = 0; parallel && a < AIRLOCK_N_ARCHES; a++)
    if (arches[a] && started[a].run)
      status = MAX (status, finish_case (r, (AirlockArch) a, &started[a], TRUE, &set, FALSE));
  if (out_dir)
    {
      AirlockBundleSetInput in = {
        .gate_id = set.gate_id,
        .arches = arches,
        .reference = set.reference,
        .index_digest = set.index_digest,
        .key = key,
      };

      /* After every arch: the record names each bundle by its finished
       * manifest, and an arch that wrote none as missing. */
      if (!airlock_bundle_set_write (out_dir, &in, &error))
        {
          run_report_error (r, -1, "the gate's set record: %s", error->message);
          status = MAX (status, HARNESS_EXIT_SETUP);
        }
      else
        fprintf (harness_err (), "airlock: set record of gate %s in %s/%s\n", set.gate_id, out_dir,
                 AIRLOCK_BUNDLE_SET_FILE);
    }
  if (gate_mode)
    {
      int g = verdicts (r);

      /* An image or setup error outranks the verdict's status. */
      return status != HARNESS_EXIT_OK && status != HARNESS_EXIT_INCONCLUSIVE ? status : g;
    }
  return status;
}
