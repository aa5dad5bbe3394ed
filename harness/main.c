#include "config.h"

#include "harness.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const HarnessCommand commands[] = {
  { "boot", cmd_boot, "boot guests, complete the evidence handshake, power off" },
  { "doctor", cmd_doctor, "check what is installed and usable, and how to fix the rest" },
  { "images", cmd_images, "build, inspect, export or import the guest images (kernel + initramfs)" },
  { "run", cmd_run, "run an image (or a test program) under the supervisor and show what it tried" },
  { "gate", cmd_gate, "the release gate: run an image on each arch with the negative controls, judge it" },
  { "replay", cmd_replay, "run a bundle's case again from its pinned inputs and compare the two runs" },
  { "verify", cmd_verify, "check an evidence bundle: digests, HMAC, the channel replayed, the verdict recomputed" },
  { "shell", cmd_shell, "an interactive shell in an image under the supervisor, each network call shown live" },
  { "show", cmd_show, "a run at a glance from its evidence bundle (reads it; verify checks it)" },
  { "policy", cmd_policy, "policy suggest: the policy that admits exactly what some bundles recorded" },
};

static void
usage (FILE *out)
{
  fprintf (out, "Usage: airlock COMMAND [OPTIONS]\n\nCommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\nRun 'airlock help COMMAND' (or 'airlock COMMAND --help') for a command's options.\n");
}

gboolean
harness_parse_clock (const char *command, const char *name, AirlockAccel accel, int guest_time_s,
                     int max_guest_time_s, AirlockClock *ret_clock)
{
  AirlockClock clock = *ret_clock;

  if (name && !airlock_clock_from_string (name, &clock))
    {
      fprintf (stderr, "%s: unknown clock '%s' (expected warp or real)\n", command, name);
      return FALSE;
    }
  if (guest_time_s >= 0 && clock != AIRLOCK_CLOCK_WARP)
    {
      fprintf (stderr, "%s: --guest-time is a limit of the warped clock's time: under --clock "
               "real the guest's time is the wall's (--timeout)\n", command);
      return FALSE;
    }
  if (guest_time_s == 0 || guest_time_s > max_guest_time_s)
    {
      fprintf (stderr, "%s: --guest-time must be 1 to %d seconds\n", command, max_guest_time_s);
      return FALSE;
    }
  if (clock == AIRLOCK_CLOCK_WARP && accel == AIRLOCK_ACCEL_KVM)
    {
      fprintf (stderr, "%s: --accel kvm cannot warp the guest's clock (QEMU runs the clock ahead "
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

static gboolean progress_open;
static char *progress_stage;

void
harness_progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  gboolean tty = isatty (STDERR_FILENO);
  gboolean new_stage = g_strcmp0 (stage, progress_stage) != 0;

  if (!tty)
    {
      /* Logs get one line per stage, and its end. */
      if (new_stage)
        fprintf (stderr, "airlock: %s\n", stage);
      g_free (progress_stage);
      progress_stage = g_strdup (stage);
      return;
    }
  if (new_stage && progress_open)
    fputc ('\n', stderr);
  g_free (progress_stage);
  progress_stage = g_strdup (stage);
  if (total > 0)
    fprintf (stderr, "\r\033[Kairlock: %s: %3d%% (%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ")",
             stage, (int) (done * 100 / total), done, total);
  else
    fprintf (stderr, "\r\033[Kairlock: %s", stage);
  progress_open = TRUE;
}

void
harness_progress_done (void)
{
  if (progress_open)
    fputc ('\n', stderr);
  progress_open = FALSE;
  g_clear_pointer (&progress_stage, g_free);
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  g_set_prgname ("airlock");

  if (argc < 2)
    {
      usage (stderr);
      return HARNESS_EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "help") && argc == 3)
    {
      /* `airlock help CMD` is `airlock CMD --help`. */
      for (size_t i = 0; i < G_N_ELEMENTS (commands); i++)
        if (g_str_equal (argv[2], commands[i].name))
          {
            char *help_argv[] = { argv[2], (char *) "--help", NULL };
            g_autofree char *prgname = g_strdup_printf ("airlock %s", commands[i].name);

            g_set_prgname (prgname);
            return commands[i].run (2, help_argv);
          }
      fprintf (stderr, "airlock: unknown command '%s'\n\n", argv[2]);
      usage (stderr);
      return HARNESS_EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"))
    {
      usage (stdout);
      return HARNESS_EXIT_OK;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      printf ("airlock %s\n", AIRLOCK_VERSION);
      return HARNESS_EXIT_OK;
    }
  /* Our QEMUs become our children and each run reaps its own (a second
   * off every teardown where PID 1 reaps slowly); refused only by kernels
   * older than 3.4, where the orphans go to PID 1 as before. */
  (void) airlock_vm_adopt_qemu (NULL);
  for (size_t i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (argv[1], commands[i].name))
      {
        /* GOption's usage line says "Usage: airlock gate [OPTION…]". */
        g_autofree char *prgname = g_strdup_printf ("airlock %s", commands[i].name);

        g_set_prgname (prgname);
        return commands[i].run (argc - 1, argv + 1);
      }

  fprintf (stderr, "airlock: unknown command '%s'\n\n", argv[1]);
  usage (stderr);
  return HARNESS_EXIT_USAGE;
}
