/* consumer: gates one image on one arch through airlock's public case API,
 * as a program outside the tree would: `#include <airlock.h>`, built with
 * nothing but `pkg-config airlock`.
 *
 *   consumer ARCH IMAGE-REF [BUNDLE-DIR]
 *
 * Prints the verdict, its reasons, the negative controls, every attempt of
 * the workload and how it exited.  With BUNDLE-DIR, the run's evidence
 * bundle is written there, then verified and read back through the
 * bundle API the `airlock` command is built on (airlock_bundle_verify(),
 * airlock_bundle_read()): it must verify, re-derive the same verdict and
 * image digest, and hold no egress attempt.  Exit status: 0 when the verdict is pass
 * and the workload made no network call at all; 1 when it is anything
 * else, or the case could not run; 77 when the arch cannot run here (no
 * QEMU for it, or its pinned guest kernel cannot be downloaded): the case
 * did not run, so it neither passed nor failed; 2 on usage. */
#include <airlock.h>

/* System headers beside it, as any program has: airlock's pkg-config
 * -I directory must hold nothing that hides them.  It once held airlock's
 * own paths.h, and <mntent.h> and <utmp.h>, which include <paths.h>, failed
 * with airlock's "Only <airlock.h> can be included directly"; _PATH_DEVNULL
 * below is glibc's, or this does not compile. */
#include <mntent.h>
#include <paths.h>
#include <stdio.h>
#include <utmp.h>

#define EXIT_SKIP 77

/* One line per stage on stderr (a log, not a terminal). */
static void
progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  char **last_stage = user_data;

  if (g_strcmp0 (stage, *last_stage) == 0)
    return;
  g_free (*last_stage);
  *last_stage = g_strdup (stage);
  fprintf (stderr, "consumer: %s\n", stage);
}

/* The session's errors that mean "this arch cannot run on this machine"
 * (case.h: a test skips with the message).  Anything else — a guest
 * program or recipe the install lacks, above all — is a failure. */
static gboolean
cannot_run_here (const GError *error)
{
  return g_error_matches (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_EMULATOR)
         || g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR,
                             AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE);
}

/* The bundle at @dir verifies, re-derives @verdict and @manifest_digest,
 * and reads back with no egress attempt in it.  Says what it found. */
static gboolean
bundle_holds_the_run (const char *arch_name, const char *dir, AirlockVerdictKind verdict,
                      const char *manifest_digest)
{
  g_autoptr (AirlockBundleReport) report = airlock_bundle_verify (dir, NULL);
  g_autoptr (AirlockBundleView) view = airlock_bundle_read (dir, 5);
  gboolean ok = TRUE;
  guint n_attempts = 0;

  for (guint i = 0; i < report->problems->len; i++)
    {
      const AirlockBundleProblem *problem = report->problems->pdata[i];

      printf ("%s: bundle problem: %s: %s\n", arch_name, problem->file ? problem->file : "-",
              problem->message);
      ok = FALSE;
    }
  if (g_strcmp0 (report->verdict, airlock_verdict_kind_to_string (verdict)) != 0
      || g_strcmp0 (report->manifest_digest, manifest_digest) != 0)
    {
      printf ("%s: the bundle re-derives verdict %s for %s, the run said %s for %s\n", arch_name,
              report->verdict ? report->verdict : "(none)",
              report->manifest_digest ? report->manifest_digest : "(none)",
              airlock_verdict_kind_to_string (verdict), manifest_digest);
      ok = FALSE;
    }
  for (guint i = 0; view->calls && i < view->calls->len; i++)
    n_attempts += ((const AirlockBundleCall *) view->calls->pdata[i])->attempt;
  if (!view->has_manifest || !view->has_events || n_attempts != 0)
    {
      printf ("%s: the bundle reads back %s\n", arch_name,
              !view->has_manifest ? "without a manifest"
              : !view->has_events ? "without its events"
                                  : "with egress attempts the run did not report");
      ok = FALSE;
    }
  if (ok)
    printf ("%s: bundle %s verifies: verdict %s, image %s\n", arch_name, dir, report->verdict,
            report->manifest_digest);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autoptr (AirlockSession) session = NULL;
  g_autoptr (AirlockCase) kase = NULL;
  g_autoptr (AirlockResult) result = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *last_stage = NULL;
  g_autoptr (GFile) devnull = g_file_new_for_path (_PATH_DEVNULL);
  g_autoptr (GFileInputStream) no_input = NULL;
  AirlockSessionOptions options = {
    .progress = progress,
    .progress_data = &last_stage,
  };
  AirlockArch arch;
  AirlockVerdictKind verdict;
  const char *arch_name;
  const char *const *reasons;
  GPtrArray *attempts;
  GPtrArray *controls;
  guint n_controls_seen = 0;
  const char *bundle_dir;

  if ((argc != 3 && argc != 4) || !airlock_arch_from_string (argv[1], &arch))
    {
      fprintf (stderr, "usage: consumer amd64|arm64 IMAGE-REF [BUNDLE-DIR]\n");
      return 2;
    }
  bundle_dir = argc == 4 ? argv[3] : NULL;
  arch_name = airlock_arch_to_string (arch);

  session = airlock_session_new (arch, &options, &error);
  if (!session)
    {
      fprintf (stderr, "consumer: %s: %s\n", arch_name, error->message);
      return cannot_run_here (error) ? EXIT_SKIP : 1;
    }

  kase = airlock_case_new (argv[2]);
  airlock_case_set_name (kase, "consumer-no-egress");
  /* The workload's stdin, as `< /dev/null` would give it. */
  no_input = g_file_read (devnull, NULL, &error);
  if (!no_input)
    {
      fprintf (stderr, "consumer: cannot open '%s': %s\n", _PATH_DEVNULL, error->message);
      return 1;
    }
  airlock_case_set_stdin_stream (kase, G_INPUT_STREAM (no_input));
  airlock_case_set_bundle_dir (kase, bundle_dir);
  result = airlock_session_run (session, kase, &error);
  if (!result)
    {
      fprintf (stderr, "consumer: %s: cannot run '%s': %s\n", arch_name, argv[2],
               error->message);
      return 1;
    }

  verdict = airlock_result_get_verdict (result);
  attempts = airlock_result_get_attempts (result);
  controls = airlock_result_get_controls (result);
  printf ("%s: verdict %s (%s, evidence %s)\n", arch_name, airlock_verdict_kind_to_string (verdict),
          airlock_result_get_accel (result),
          airlock_result_is_complete (result) ? "complete"
                                              : airlock_result_get_incomplete_reason (result));
  printf ("%s: image %s, manifest %s\n", arch_name, airlock_result_get_reference (result),
          airlock_result_get_manifest_digest (result));
  reasons = airlock_result_get_reasons (result);
  for (guint i = 0; reasons && reasons[i]; i++)
    printf ("%s: reason: %s\n", arch_name, reasons[i]);
  for (guint i = 0; i < controls->len; i++)
    {
      const AirlockResultControl *control = controls->pdata[i];

      if (control->by_supervisor && control->in_capture)
        n_controls_seen++;
    }
  printf ("%s: negative controls seen %u/%u\n", arch_name, n_controls_seen, controls->len);
  printf ("%s: attempts (%u)\n", arch_name, attempts->len);
  for (guint i = 0; i < attempts->len; i++)
    {
      g_autofree char *line = airlock_attempt_to_string (attempts->pdata[i]);

      printf ("%s\n", line);
    }
  printf ("%s: workload exit code %d\n", arch_name, airlock_result_get_exit_code (result));

  if (bundle_dir && !bundle_holds_the_run (arch_name, bundle_dir, verdict,
                                           airlock_result_get_manifest_digest (result)))
    return 1;
  return verdict == AIRLOCK_VERDICT_PASS && attempts->len == 0 ? 0 : 1;
}
