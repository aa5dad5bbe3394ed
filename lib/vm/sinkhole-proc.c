/* The run's side of the sinkhole process (sinkhole-proc.h).
 *
 * The process is ours: started here, ended by its pid (it ends by itself
 * when QEMU's side of the socket closes, or when the pipe we hold as its
 * stdin closes because we are gone). */
#include "config.h"

#include "vm/sinkhole-proc.h"

#include "fsutil-private.h"
#include "sinkhole/sinkhole.h"
#include "vm/vm.h"

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <errno.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>

/* How long a finished run waits for the process to write its last line:
 * it only closes the connections still open and writes their records. */
#define FINISH_WAIT_MS 10000
/* How long the process may take to set up (namespace, tap, nftables). */
#define READY_WAIT_MS 20000

struct _AirlockSinkholeProc {
  GSubprocess *proc;
  char *dir;
  char *socket_path;
  char *pcap_path;
  char *records_path;
  char *log_path;
  gboolean finished;
};

const char *
airlock_sinkhole_program (void)
{
  const char *env = g_getenv ("AIRLOCK_SINKHOLE");

  return (env && *env) ? env : AIRLOCK_LIBEXECDIR "/airlock-sinkhole";
}

/* The process's own words on why it stopped (its stderr, a file). */
static char *
proc_log (AirlockSinkholeProc *p)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents (p->log_path, &text, NULL, NULL) || !*g_strstrip (text))
    return g_strdup ("(it printed nothing)");
  return g_steal_pointer (&text);
}

/* Reads the process's stdout for "ready\n", at most @ms. */
static gboolean
read_ready (AirlockSinkholeProc *p, guint ms, gboolean *ret_timed_out)
{
  int fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (g_subprocess_get_stdout_pipe (p->proc)));
  gint64 deadline = g_get_monotonic_time () + (gint64) ms * 1000;
  char buf[16];
  gsize len = 0;

  while (len < sizeof buf)
    {
      GPollFD pfd = { .fd = fd, .events = G_IO_IN };
      gint64 left = deadline - g_get_monotonic_time ();
      ssize_t n;

      if (left <= 0 || g_poll (&pfd, 1, (gint) (left / 1000) + 1) <= 0)
        {
          *ret_timed_out = TRUE;
          return FALSE;
        }
      n = read (fd, buf + len, sizeof buf - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      len += (gsize) n;
      if (len >= 6)
        return memcmp (buf, "ready\n", 6) == 0;
    }
  return FALSE;
}

AirlockSinkholeProc *
airlock_sinkhole_proc_start (const char *dir, gboolean give_socket, guint32 owner_uid,
                             guint32 owner_gid, const char *const *serve, GError **error)
{
  g_autoptr (AirlockSinkholeProc) p = g_new0 (AirlockSinkholeProc, 1);
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) local = NULL;
  gboolean running = FALSE;

  p->dir = g_strdup (dir);
  p->socket_path = g_build_filename (dir, "net.sock", NULL);
  p->pcap_path = g_build_filename (dir, "net.pcap", NULL);
  p->records_path = g_build_filename (dir, "sinkhole.jsonl", NULL);
  p->log_path = g_build_filename (dir, "sinkhole.log", NULL);

  g_ptr_array_add (argv, g_strdup (airlock_sinkhole_program ()));
  g_ptr_array_add (argv, g_strdup_printf ("--socket=%s", p->socket_path));
  g_ptr_array_add (argv, g_strdup_printf ("--pcap=%s", p->pcap_path));
  g_ptr_array_add (argv, g_strdup_printf ("--records=%s", p->records_path));
  if (give_socket)
    g_ptr_array_add (argv, g_strdup_printf ("--socket-owner=%u:%u", owner_uid, owner_gid));
  for (guint i = 0; serve && serve[i]; i++)
    g_ptr_array_add (argv, g_strdup_printf ("--serve=%s", serve[i]));
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE
                                        | G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_set_stderr_file_path (launcher, p->log_path);
  p->proc = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &local);
  if (!p->proc)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "cannot start the sinkhole network '%s': %s (is airlock installed whole? "
                   "in a build tree, run through `meson devenv`)",
                   airlock_sinkhole_program (), local->message);
      return NULL;
    }
  /* "ready" on its stdout: the socket listens and the network is up. */
  if (!read_ready (p, READY_WAIT_MS, &running))
    {
      g_autofree char *why = NULL;

      g_subprocess_force_exit (p->proc);
      g_subprocess_wait (p->proc, NULL, NULL);
      why = proc_log (p);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "the sinkhole network did not start%s: %s",
                   running ? " within 20 s" : "", why);
      return NULL;
    }
  return g_steal_pointer (&p);
}

const char *
airlock_sinkhole_proc_socket (AirlockSinkholeProc *proc)
{
  return proc->socket_path;
}

const char *
airlock_sinkhole_proc_pcap (AirlockSinkholeProc *proc)
{
  return proc->pcap_path;
}

/* Waits up to @ms for the process to end; FALSE when it is still running.
 * GSubprocess reaps it on GLib's worker thread, so polling its identifier
 * needs no main loop of ours. */
static gboolean
wait_bounded (GSubprocess *proc, guint ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_subprocess_get_identifier (proc))
    {
      if (g_get_monotonic_time () >= deadline)
        return FALSE;
      g_usleep (10 * 1000);
    }
  g_subprocess_wait (proc, NULL, NULL);
  return TRUE;
}

GBytes *
airlock_sinkhole_proc_finish (AirlockSinkholeProc *p, char **ret_error)
{
  g_autoptr (GError) local = NULL;
  GBytes *bytes;

  p->finished = TRUE;
  if (!wait_bounded (p->proc, FINISH_WAIT_MS))
    {
      /* QEMU's end closed long ago (or never opened): SIGTERM makes it
       * write its last records and the final line. */
      g_subprocess_send_signal (p->proc, SIGTERM);
      if (!wait_bounded (p->proc, FINISH_WAIT_MS))
        {
          g_subprocess_force_exit (p->proc);
          g_subprocess_wait (p->proc, NULL, NULL);
        }
    }
  if (!g_subprocess_get_if_exited (p->proc) || g_subprocess_get_exit_status (p->proc) != 0)
    {
      g_autofree char *why = proc_log (p);
      *ret_error = g_strdup_printf ("the sinkhole network failed: %s", why);
      return NULL;
    }
  bytes = airlock_read_file_bounded (p->records_path, AIRLOCK_SINKHOLE_LOG_MAX, &local);
  if (!bytes)
    *ret_error = g_strdup_printf ("the sinkhole's records cannot be read: %s", local->message);
  return bytes;
}

void
airlock_sinkhole_proc_free (AirlockSinkholeProc *p)
{
  if (p->proc)
    {
      if (!p->finished && g_subprocess_get_identifier (p->proc))
        {
          g_subprocess_send_signal (p->proc, SIGTERM);
          if (!wait_bounded (p->proc, FINISH_WAIT_MS))
            {
              g_subprocess_force_exit (p->proc);
              g_subprocess_wait (p->proc, NULL, NULL);
            }
        }
      g_object_unref (p->proc);
    }
  g_free (p->dir);
  g_free (p->socket_path);
  g_free (p->pcap_path);
  g_free (p->records_path);
  g_free (p->log_path);
  g_free (p);
}

gboolean
airlock_network_check (GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *dir = g_dir_make_tmp ("airlock-network-check-XXXXXX", &local);
  AirlockSinkholeProc *p;

  if (!dir)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "cannot make a directory for the check: %s", local->message);
      return FALSE;
    }
  p = airlock_sinkhole_proc_start (dir, FALSE, 0, 0, NULL, error);
  if (p)
    airlock_sinkhole_proc_free (p);
  airlock_rm_rf (dir);
  return p != NULL;
}
