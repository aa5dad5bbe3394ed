/* bench/floor.c: the bare-QEMU boot floor (floor.h), shared by bench/boot
 * and bench/gate. */
#define _GNU_SOURCE   /* memmem */

#include "config.h"

#include "floor.h"

#include "guestimg/cpio-private.h"
#include "vm/domain-xml-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* guest/floor-init.c writes this line to the console. */
#define FLOOR_MARKER "airlock-floor: init"
#define FLOOR_TIMEOUT_S 60
#define FLOOR_OUTPUT_CAP (1024 * 1024)
#define TAIL_BYTES 2000

static double
secs (gint64 from, gint64 to)
{
  return (from && to && to >= from) ? (to - from) / 1e6 : -1;
}

char *
bench_floor_qemu_for_arch (AirlockArch arch)
{
  const char *env = g_getenv (arch == AIRLOCK_ARCH_AMD64 ? "AIRLOCK_QEMU_X86_64" : "AIRLOCK_QEMU_AARCH64");

  /* libvirt picks its own emulator unless airlock is told one: on a stock
   * Debian host that is this same configured path. */
  if (env && *env)
    return g_strdup (env);
  return g_strdup (arch == AIRLOCK_ARCH_AMD64 ? AIRLOCK_QEMU_X86_64 : AIRLOCK_QEMU_AARCH64);
}

char *
bench_floor_qemu_version (const char *qemu)
{
  const char *argv[] = { qemu, "--version", NULL };
  g_autofree char *out = NULL;
  char *nl;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                     NULL, NULL, NULL) || !out)
    return g_strdup ("unknown");
  nl = strchr (out, '\n');
  if (nl)
    *nl = '\0';
  return g_steal_pointer (&out);
}

char *
bench_floor_write_initrd (AirlockArch arch, const char *tmp_dir, GError **error)
{
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *program_name = g_strdup_printf ("floor-init-%s", arch_name);
  g_autofree char *program = g_build_filename (airlock_guest_programs_dir (), program_name, NULL);
  g_autofree char *name = g_strdup_printf ("floor-%s.cpio", arch_name);
  g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFileOutputStream) out = NULL;

  if (!g_file_test (program, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "cannot find the floor init '%s': build it (guest/floor-init.c) or point "
                   "$AIRLOCK_GUEST_DIR at the directory holding %s",
                   program, program_name);
      return NULL;
    }
  if (!airlock_cpio_add_file (cpio, "init", 0755, program, error))
    return NULL;
  out = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_PRIVATE, NULL, error);
  if (!out)
    return NULL;
  if (!airlock_cpio_write (cpio, G_OUTPUT_STREAM (out), NULL, NULL, error)
      || !g_output_stream_close (G_OUTPUT_STREAM (out), NULL, error))
    {
      g_prefix_error (error, "cannot write the floor initramfs '%s': ", path);
      (void) g_unlink (path);
      return NULL;
    }
  return g_steal_pointer (&path);
}

static GPtrArray *
floor_argv (const BenchFloor *f)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);
  gboolean amd64 = f->arch == AIRLOCK_ARCH_AMD64;
  const char *tokens = f->cmdline_tokens ? f->cmdline_tokens
                                         : airlock_domain_kernel_tokens (f->arch, FALSE);

  g_ptr_array_add (argv, g_strdup (f->qemu));
  /* The machine and CPU model airlock's domain XML asks libvirt for under TCG. */
  g_ptr_array_add (argv, g_strdup ("-M"));
  g_ptr_array_add (argv, g_strdup (amd64 ? "q35" : "virt"));
  g_ptr_array_add (argv, g_strdup ("-cpu"));
  g_ptr_array_add (argv, g_strdup (amd64 ? "max,erms=off" : "cortex-a57"));
  g_ptr_array_add (argv, g_strdup ("-accel"));
  g_ptr_array_add (argv, g_strdup ("tcg"));
  g_ptr_array_add (argv, g_strdup ("-m"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", BENCH_FLOOR_MEMORY_MIB));
  g_ptr_array_add (argv, g_strdup ("-nodefaults"));
  g_ptr_array_add (argv, g_strdup ("-no-user-config"));
  /* What libvirt passes.  -nographic would also make SeaBIOS draw its boot
   * messages on the serial port (sercon): ~0.1 s more for the amd64 floor
   * under TCG, which would flatter airlock. */
  g_ptr_array_add (argv, g_strdup ("-display"));
  g_ptr_array_add (argv, g_strdup ("none"));
  g_ptr_array_add (argv, g_strdup ("-no-reboot"));
  g_ptr_array_add (argv, g_strdup ("-serial"));
  g_ptr_array_add (argv, g_strdup ("stdio"));
  g_ptr_array_add (argv, g_strdup ("-kernel"));
  g_ptr_array_add (argv, g_strdup (f->kernel_path));
  g_ptr_array_add (argv, g_strdup ("-initrd"));
  g_ptr_array_add (argv, g_strdup (f->initrd));
  g_ptr_array_add (argv, g_strdup ("-append"));
  g_ptr_array_add (argv, g_strdup_printf ("console=%s%s%s", airlock_domain_console_device (f->arch),
                                          *tokens ? " " : "", tokens));
  for (char **a = f->extra_args; a && *a; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  return argv;
}

void
bench_print_tail (const char *what, const guint8 *data, gsize len)
{
  gsize from = len > TAIL_BYTES ? len - TAIL_BYTES : 0;

  fprintf (stderr, "%s: %s, last %" G_GSIZE_FORMAT " bytes:\n%.*s\n", g_get_prgname (), what, len - from,
           (int) (len - from), (const char *) data + from);
}

/* QEMU's exit is bounded by FLOOR_TIMEOUT_S. */
gboolean
bench_floor_run (const BenchFloor *f, FloorSample *ret_sample, GError **error)
{
  g_autoptr (GPtrArray) argv = floor_argv (f);
  g_autoptr (GByteArray) output = g_byte_array_new ();
  const char *arch_name = airlock_arch_to_string (f->arch);
  gsize marker_len = strlen (FLOOR_MARKER);
  int pipe_fds[2] = { -1, -1 };
  GPid pid = 0;
  gint64 spawned;
  gint64 deadline;
  gint64 ready = 0;
  gint64 reaped = 0;
  gboolean eof = FALSE;
  int wait_status = 0;

  if (!g_unix_open_pipe (pipe_fds, FD_CLOEXEC, error))
    return FALSE;
  spawned = g_get_monotonic_time ();
  /* stdout and stderr on one pipe: the console, and QEMU's own complaints
   * when it fails. */
  if (!g_spawn_async_with_pipes_and_fds (NULL, (const char *const *) argv->pdata, NULL,
                                         G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDIN_FROM_DEV_NULL,
                                         NULL, NULL, -1, pipe_fds[1], pipe_fds[1], NULL, NULL, 0,
                                         &pid, NULL, NULL, NULL, error))
    {
      close (pipe_fds[0]);
      close (pipe_fds[1]);
      g_prefix_error (error, "cannot start the %s floor '%s': ", arch_name, f->qemu);
      return FALSE;
    }
  close (pipe_fds[1]);
  deadline = spawned + (gint64) FLOOR_TIMEOUT_S * G_USEC_PER_SEC;

  while (!eof)
    {
      gint64 now = g_get_monotonic_time ();
      struct pollfd pfd = { .fd = pipe_fds[0], .events = POLLIN };
      char buf[4096];
      ssize_t got;
      int n;

      if (now >= deadline)
        break;
      n = poll (&pfd, 1, (int) ((deadline - now + 999) / 1000));
      if (n <= 0)
        continue;   /* EINTR or the deadline: the top of the loop decides */
      got = read (pipe_fds[0], buf, sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        {
          eof = TRUE;
          break;
        }
      if (output->len + (gsize) got <= FLOOR_OUTPUT_CAP)
        {
          /* Search only what could hold a marker completed by this read. */
          gsize from = output->len > marker_len ? output->len - marker_len : 0;

          g_byte_array_append (output, (const guint8 *) buf, (guint) got);
          if (!ready && memmem (output->data + from, output->len - from, FLOOR_MARKER, marker_len))
            ready = g_get_monotonic_time ();
        }
    }
  close (pipe_fds[0]);

  /* QEMU closes its output only when it exits; still, never wait unbounded. */
  while (!reaped)
    {
      pid_t r = waitpid (pid, &wait_status, WNOHANG);

      if (r == pid)
        reaped = g_get_monotonic_time ();
      else if (r < 0 && errno != EINTR)
        break;
      else if (g_get_monotonic_time () >= deadline)
        {
          (void) kill (pid, SIGKILL);
          (void) waitpid (pid, &wait_status, 0);
          break;
        }
      else
        g_usleep (1000);
    }
  g_spawn_close_pid (pid);

  if (!reaped)
    {
      bench_print_tail ("floor console", output->data, output->len);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                   "the %s floor did not power off within %d s (%s); killed it", arch_name,
                   FLOOR_TIMEOUT_S, ready ? "its init ran" : "its init never ran");
      return FALSE;
    }
  if (!ready || !WIFEXITED (wait_status) || WEXITSTATUS (wait_status) != 0)
    {
      bench_print_tail ("floor console", output->data, output->len);
      if (!ready)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                     "the %s floor never printed '%s' (its init did not run)", arch_name, FLOOR_MARKER);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the %s floor's QEMU %s %d", arch_name,
                     WIFEXITED (wait_status) ? "exited with status" : "was killed by signal",
                     WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : WTERMSIG (wait_status));
      return FALSE;
    }
  ret_sample->ready = secs (spawned, ready);
  ret_sample->exit = secs (spawned, reaped);
  return TRUE;
}
