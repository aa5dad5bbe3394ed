/* The helpers every subcommand shares (harness.h): the exit status of an
 * image error, the --arch and --clock options, progress on stderr, what a
 * bundle directory looks like.  Here rather than in the subcommand that
 * first needed each, so a new subcommand finds them in one place and no
 * cmd-*.c depends on another. */
#include "config.h"

#include "harness.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
harness_exit_for_image_error (const GError *error)
{
  static const int statuses[] = {
    [AIRLOCK_IMAGE_ERROR_REFERENCE] = HARNESS_EXIT_IMAGE_REFERENCE,
    [AIRLOCK_IMAGE_ERROR_NOT_FOUND] = HARNESS_EXIT_IMAGE_NOT_FOUND,
    [AIRLOCK_IMAGE_ERROR_DIGEST] = HARNESS_EXIT_IMAGE_DIGEST,
    [AIRLOCK_IMAGE_ERROR_MALFORMED] = HARNESS_EXIT_IMAGE_MALFORMED,
    [AIRLOCK_IMAGE_ERROR_UNSUPPORTED] = HARNESS_EXIT_IMAGE_UNSUPPORTED,
    [AIRLOCK_IMAGE_ERROR_NO_ARCH] = HARNESS_EXIT_IMAGE_NO_ARCH,
    [AIRLOCK_IMAGE_ERROR_UNSAFE] = HARNESS_EXIT_IMAGE_UNSAFE,
    [AIRLOCK_IMAGE_ERROR_LIMIT] = HARNESS_EXIT_IMAGE_LIMIT,
    [AIRLOCK_IMAGE_ERROR_DISK] = HARNESS_EXIT_IMAGE_DISK,
    [AIRLOCK_IMAGE_ERROR_USER] = HARNESS_EXIT_IMAGE_USER,
    [AIRLOCK_IMAGE_ERROR_NO_COMMAND] = HARNESS_EXIT_IMAGE_NO_COMMAND,
  };

  if (error && error->domain == AIRLOCK_IMAGE_ERROR && error->code >= 0 &&
      (gsize) error->code < G_N_ELEMENTS (statuses) && statuses[error->code])
    return statuses[error->code];
  return HARNESS_EXIT_SETUP;
}

gboolean
harness_image_runs_on (AirlockImageSource *source, AirlockArch arch, const char *const *args,
                       GError **error)
{
  g_autoptr (AirlockImage) image = airlock_image_resolve (source, arch, error);
  g_auto (GStrv) command = NULL;

  if (image)
    command = airlock_image_command (image, args, error);
  return command != NULL;
}

gboolean
harness_is_bundle (const char *dir)
{
  g_autofree char *manifest = g_build_filename (dir, "manifest.json", NULL);
  g_autofree char *marker = g_build_filename (dir, AIRLOCK_BUNDLE_INCOMPLETE, NULL);

  return g_file_test (manifest, G_FILE_TEST_EXISTS) || g_file_test (marker, G_FILE_TEST_EXISTS);
}

gboolean
harness_parse_clock (const char *command, const char *name, AirlockAccel accel, int guest_time_s,
                     int max_guest_time_s, AirlockClock *ret_clock)
{
  AirlockClock clock = *ret_clock;
  gboolean guest_time_given = guest_time_s != HARNESS_GUEST_TIME_UNSET;

  if (name && !airlock_clock_from_string (name, &clock))
    {
      fprintf (harness_err (), "%s: unknown clock '%s' (expected warp or real)\n", command, name);
      return FALSE;
    }
  if (guest_time_given && clock != AIRLOCK_CLOCK_WARP)
    {
      fprintf (harness_err (),
               "%s: --guest-time is a limit of the warped clock's time: under --clock "
               "real the guest's time is the wall's (--timeout)\n", command);
      return FALSE;
    }
  if (guest_time_given && (guest_time_s < 1 || guest_time_s > max_guest_time_s))
    {
      fprintf (harness_err (),
               "%s: --guest-time must be 1 to %d seconds\n", command, max_guest_time_s);
      return FALSE;
    }
  if (clock == AIRLOCK_CLOCK_WARP && accel == AIRLOCK_ACCEL_KVM)
    {
      fprintf (harness_err (),
               "%s: --accel kvm cannot warp the guest's clock (QEMU runs the clock ahead "
               "only of the instructions it emulates): give --clock real to run under KVM, or "
               "--accel tcg\n", command);
      return FALSE;
    }
  *ret_clock = clock;
  return TRUE;
}

gboolean
harness_parse_arches (const char *spec, gboolean ret_arches[AIRLOCK_N_ARCHES], GError **error)
{
  g_auto (GStrv) words = g_strsplit (spec, ",", -1);
  gboolean chosen[AIRLOCK_N_ARCHES] = { FALSE };
  gboolean any = FALSE;

  for (char **w = words; *w; w++)
    {
      AirlockArch arch;
      if (g_str_equal (*w, "all"))
        {
          for (unsigned i = 0; i < AIRLOCK_N_ARCHES; i++)
            chosen[i] = TRUE;
        }
      else if (airlock_arch_from_string (*w, &arch))
        chosen[arch] = TRUE;
      else
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "unknown arch '%s' (expected amd64, arm64, all or a comma-separated list of them; x86_64 and aarch64 name the same)", *w);
          return FALSE;
        }
      any = TRUE;
    }
  if (!any)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "empty arch list '%s' (expected amd64, arm64, all or a comma-separated list)", spec);
      return FALSE;
    }
  memcpy (ret_arches, chosen, sizeof chosen);
  return TRUE;
}

/* Where this thread's command prints (harness.h): the process's stdout
 * and stderr, unless an image of a gate over several run at once gave it
 * buffers of its own (cmd-gate.c).  Per thread, as the progress line is. */
static __thread FILE *thread_out;
static __thread FILE *thread_err;

FILE *
harness_out (void)
{
  return thread_out ? thread_out : stdout;
}

FILE *
harness_err (void)
{
  return thread_err ? thread_err : stderr;
}

const char *
harness_keep_error (GPtrArray *errors, const char *command, const char *format, va_list ap)
{
  char *message = g_strdup_vprintf (format, ap);

  fprintf (harness_err (), "%s: %s\n", command, message);
  g_ptr_array_add (errors, message);
  return message;
}

void
harness_set_thread_output (FILE *out, FILE *err)
{
  thread_out = out;
  thread_err = err;
}

static __thread gboolean progress_open;
static __thread char *progress_stage;

void
harness_progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  gboolean tty = !thread_err && isatty (STDERR_FILENO);
  gboolean new_stage = g_strcmp0 (stage, progress_stage) != 0;

  if (!tty)
    {
      /* Logs get one line per stage, and its end. */
      if (new_stage)
        fprintf (harness_err (), "airlock: %s\n", stage);
      g_free (progress_stage);
      progress_stage = g_strdup (stage);
      return;
    }
  if (new_stage && progress_open)
    fputc ('\n', harness_err ());
  g_free (progress_stage);
  progress_stage = g_strdup (stage);
  if (total > 0)
    fprintf (harness_err (),
             "\r\033[Kairlock: %s: %3d%% (%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ")",
             stage, (int) (done * 100 / total), done, total);
  else
    fprintf (harness_err (), "\r\033[Kairlock: %s", stage);
  progress_open = TRUE;
}

void
harness_progress_done (void)
{
  if (progress_open)
    fputc ('\n', harness_err ());
  progress_open = FALSE;
  g_clear_pointer (&progress_stage, g_free);
}

void
harness_print_json_line (JsonBuilder *b)
{
  g_autofree char *text = airlock_json_builder_to_text (b, FALSE);

  fprintf (harness_out (), "%s\n", text);
  fflush (harness_out ());
}
