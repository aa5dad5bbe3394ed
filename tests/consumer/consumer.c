/* consumer: gates one image on one arch through airlock's public case API,
 * as a program outside the tree would: `#include <airlock.h>`, built with
 * nothing but `pkg-config airlock`.
 *
 *   consumer ARCH IMAGE-REF
 *
 * Prints the verdict, its reasons, the negative controls, every attempt of
 * the workload and how it exited.  Exit status: 0 when the verdict is pass
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

  if (argc != 3 || !airlock_arch_from_string (argv[1], &arch))
    {
      fprintf (stderr, "usage: consumer amd64|arm64 IMAGE-REF\n");
      return 2;
    }
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

  return verdict == AIRLOCK_VERDICT_PASS && attempts->len == 0 ? 0 : 1;
}
