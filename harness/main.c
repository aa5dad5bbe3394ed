#include "config.h"

#include "harness.h"

#include <locale.h>
#include <signal.h>
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

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  g_set_prgname ("airlock");
  /* libvirt's client writes to the daemon's socket with plain write(2) and
   * leaves SIGPIPE to the application: a qemu:///system daemon restarted
   * mid-run killed `airlock gate` by SIGPIPE (exit 141) instead of letting
   * the run end inconclusive (seen once in hostile-faults'
   * libvirtd-restarted case).  Ignored, a write to a closed socket or pipe
   * fails with EPIPE where it happens; libvirt resets the QEMUs it starts
   * to the default. */
  signal (SIGPIPE, SIG_IGN);

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
