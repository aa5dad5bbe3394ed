/* airlock-sinkhole: the network airlock serves one guest (docs/sinkhole.md).
 *
 *   QEMU -netdev stream ──unix socket──► this process ──tap──► the kernel's
 *   TCP/IP stack, in a network namespace that holds only `lo` and the tap
 *
 * One process per run, started by lib/vm/sinkhole-proc.c.  It listens on
 * the unix socket QEMU's NIC connects to, then leaves the host's network
 * for a namespace of its own (unshare(CLONE_NEWNET); with a user namespace
 * when not root), where it makes the tap, gives it the addresses QEMU's
 * user network had (the guest's static configuration is unchanged), and
 * loads one nftables table that redirects every TCP connection and UDP
 * datagram arriving on the tap, to any address and port, IPv4 and IPv6, to
 * its own listeners, and lets the kernel answer ICMP echo.  A packet that
 * is not redirected has nowhere to go: the namespace has no other
 * interface, no route and no forwarding.  The TCP/IP is the kernel's; what
 * is written here is the relay, the listeners and the records.
 *
 * Once set up, the process can no longer make a socket or connect one: a
 * seccomp filter refuses socket(2), socketpair(2) and connect(2) (EPERM)
 * for the rest of its life, so even a bug in a parser of guest bytes cannot
 * open anything outward (tests/vm/host-safety.sh proves it from outside).
 *
 * Every frame either way is written to the capture (classic pcap) before
 * it is passed on; when the capture reaches its bound the relay stops
 * passing frames (the guest loses its network, the evidence loses
 * nothing).  Records (sinkhole.h) are written one per line as each
 * exchange ends, and a final line when QEMU's side closes.
 *
 * Exit status: 0 after the final line; 1 when setting up failed (the
 * reason on stderr, before "ready" is written to stdout). */
#define _GNU_SOURCE
#include "config.h"

#include "server.h"

#include "net/guest-net.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static gboolean
on_signal (gpointer user_data)
{
  sinkhole_finish (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
on_parent (int fd, GIOCondition cond, gpointer user_data)
{
  char buf[64];

  if (read (fd, buf, sizeof buf) > 0)
    return G_SOURCE_CONTINUE;
  sinkhole_finish (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
add_fixture (Sinkhole *sh, const char *spec, GError **error)
{
  const char *eq = strchr (spec, '=');
  const char *colon;
  g_autofree char *host = NULL;
  guint64 port;
  g_autoptr (GMappedFile) file = NULL;
  Fixture *f;

  if (!eq || !(colon = memchr (spec, ':', (gsize) (eq - spec))) || colon == spec)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--serve '%s': expected NAME:PORT=FILE", spec);
      return FALSE;
    }
  host = g_ascii_strdown (spec, colon - spec);
  {
    g_autofree char *p = g_strndup (colon + 1, (gsize) (eq - colon - 1));
    if (!g_ascii_string_to_unsigned (p, 10, 1, 65535, &port, NULL))
      {
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--serve '%s': '%s' is not a port (1-65535)", spec, p);
        return FALSE;
      }
  }
  file = g_mapped_file_new (eq + 1, FALSE, error);
  if (!file)
    return FALSE;
  f = g_new0 (Fixture, 1);
  f->name = g_str_has_suffix (host, ".") ? g_steal_pointer (&host) : g_strconcat (host, ".", NULL);
  f->port = (guint16) port;
  f->bytes = g_mapped_file_get_bytes (file);
  g_ptr_array_add (sh->fixtures, f);
  return TRUE;
}


int
main (int argc, char **argv)
{
  static Sinkhole sinkhole;
  Sinkhole *sh = &sinkhole;
  g_autofree char *socket_path = NULL;
  g_autofree char *pcap_path = NULL;
  g_autofree char *records_path = NULL;
  g_autofree char *socket_owner = NULL;
  g_auto (GStrv) serve = NULL;
  GOptionEntry entries[] = {
    { "socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_path, "Unix socket QEMU's NIC connects to", "PATH" },
    { "socket-owner", 0, 0, G_OPTION_ARG_STRING, &socket_owner, "Give the socket to QEMU's user", "UID:GID" },
    { "pcap", 0, 0, G_OPTION_ARG_FILENAME, &pcap_path, "Capture file to write", "PATH" },
    { "records", 0, 0, G_OPTION_ARG_FILENAME, &records_path, "Record file to write", "PATH" },
    { "serve", 0, 0, G_OPTION_ARG_STRING_ARRAY, &serve, "What NAME answers on PORT", "NAME:PORT=FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the network airlock serves one guest");
  g_autoptr (GError) error = NULL;
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd;

  /* Every peer may go at any time: QEMU's end of the socket when the VM
   * stops (with a frame from the namespace still on its way), a guest's
   * connection reset under a fixture being sent.  Each is a write that
   * fails with EPIPE, handled where it happens; SIGPIPE's default would
   * kill the process instead, and lib/vm/sinkhole-proc.c takes the records
   * of an exit with status 0 only: the run would lose them. */
  signal (SIGPIPE, SIG_IGN);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    sinkhole_die ("%s", error->message);
  if (!socket_path || !pcap_path || !records_path)
    sinkhole_die ("--socket, --pcap and --records are required");

  {
    guint m[6];
    if (sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
                &m[5]) != 6)
      sinkhole_die ("cannot read the guest's MAC '%s'", AIRLOCK_NET_GUEST_MAC);
    for (int i = 0; i < 6; i++)
      sh->guest_mac[i] = (guint8) m[i];
  }
  sh->start_us = g_get_monotonic_time ();
  sh->names = airlock_sinkhole_names_new ();
  sh->fixtures = g_ptr_array_new ();
  sh->conns = g_hash_table_new (NULL, NULL);
  sh->dns_dest = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  sh->qemu_fd = -1;
  g_queue_init (&sh->delayed);
  {
    const char *delay = g_getenv ("AIRLOCK_SINKHOLE_TEST_DELAY_MS");
    guint64 ms = 0;

    if (delay && (!g_ascii_string_to_unsigned (delay, 10, 0, 10000, &ms, NULL)))
      sinkhole_die ("AIRLOCK_SINKHOLE_TEST_DELAY_MS='%s' is not a number of milliseconds up to 10000", delay);
    sh->delay_us = (gint64) ms * 1000;
  }
  for (guint i = 0; serve && serve[i]; i++)
    if (!add_fixture (sh, serve[i], &error))
      sinkhole_die ("%s", error->message);

  /* Files first, on the host's side of everything. */
  sh->pcap_fd = open (pcap_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (sh->pcap_fd < 0)
    sinkhole_die ("cannot create the capture '%s': %s", pcap_path, g_strerror (errno));
  fd = open (records_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || !(sh->records = fdopen (fd, "w")))
    sinkhole_die ("cannot create the record file '%s': %s", records_path, g_strerror (errno));
  sinkhole_capture_start (sh);

  /* QEMU's socket: a filesystem path, reachable from the host's side
   * whatever namespace we are in. */
  if (strlen (socket_path) >= sizeof sun.sun_path)
    sinkhole_die ("socket path '%s' is too long for a unix socket", socket_path);
  strcpy (sun.sun_path, socket_path);
  sh->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sh->listen_fd < 0 || bind (sh->listen_fd, (struct sockaddr *) &sun, sizeof sun) < 0
      || listen (sh->listen_fd, 1) < 0)
    sinkhole_die ("cannot listen on '%s': %s", socket_path, g_strerror (errno));
  if (chmod (socket_path, 0600) < 0)
    sinkhole_die ("cannot chmod '%s': %s", socket_path, g_strerror (errno));
  if (socket_owner)
    {
      unsigned uid, gid;
      if (sscanf (socket_owner, "%u:%u", &uid, &gid) != 2 || chown (socket_path, uid, gid) < 0)
        sinkhole_die ("cannot give '%s' to %s: %s", socket_path, socket_owner, g_strerror (errno));
    }

  sinkhole_enter_namespace ();
  sh->tap_fd = sinkhole_make_tap ();
  sinkhole_load_rules ();
  sinkhole_listeners_start (sh);
  /* GLib's main context makes its wakeup (an eventfd) on first use:
   * make it now, before sockets are forbidden. */
  sh->loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGTERM, on_signal, sh);
  /* Our stdin is a pipe the parent holds open: its end (the parent died)
   * ends us as QEMU's end does.  Not PR_SET_PDEATHSIG: that follows the
   * thread that started us, which may end long before the run. */
  g_unix_fd_add (0, G_IO_IN | G_IO_HUP | G_IO_ERR, on_parent, sh);
  g_unix_signal_add (SIGINT, on_signal, sh);
  sinkhole_forbid_new_sockets ();

  fputs ("ready\n", stdout);
  fflush (stdout);

  /* One client: QEMU.  The parent stops us by pid (SIGTERM: the records
   * still end with their final line) when the domain does not start. */
  sinkhole_relay_start (sh);
  g_main_loop_run (sh->loop);
  return 0;
}
