/* What a run hears from its domain and says to it: the endpoints (our own
 * unix sockets under the embedded driver, libvirt streams through a
 * daemon), the evidence reader feeding the channel, the console reader,
 * the workload's stdio port (stdin sent, stdout and stderr kept, the
 * terminal's size), the warped clock's ticker, and the domain's lifecycle
 * events.  Every thread here takes vm->lock for what it shares with the
 * lifecycle (vm.c); the teardown (teardown.c) ends them. */
#include "config.h"

#include "vm/streams-private.h"

#include "bounds-private.h"
#include "protocol.h"
#include "wire.h"
#include "vm/stdio-chunks-private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Returns bytes read, 0 at end of file, -1 on error. */
static int
endpoint_recv (AirlockEndpoint *ep, char *buf, size_t size)
{
  for (;;)
    {
      int n;

      if (ep->fd >= 0)
        {
          n = read (ep->fd, buf, size);
          if (n < 0 && errno == EINTR)
            continue;
          return n < 0 ? -1 : n;
        }
      n = virStreamRecv (ep->stream, buf, size);
      if (n != -2)
        return n;
    }
}

static gboolean
endpoint_send_all (AirlockEndpoint *ep, const guint8 *data, gsize len)
{
  while (len > 0)
    {
      /* MSG_NOSIGNAL: a QEMU that died must not take us down with SIGPIPE. */
      ssize_t n = ep->fd >= 0 ? send (ep->fd, data, len, MSG_NOSIGNAL)
                              : virStreamSend (ep->stream, (const char *) data, len);

      if (n == -2 || (n < 0 && ep->fd >= 0 && errno == EINTR))
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      len -= n;
    }
  return TRUE;
}

/* Sends one byte of ours to the guest's evidence port without waiting for
 * room: a guest that stopped reading must not stall the ticker.  A tick
 * that does not fit is dropped (the heartbeat watchdog judges the guest),
 * a stop is tried again. */
static gboolean
endpoint_send_byte (AirlockEndpoint *ep, guint8 byte)
{
  if (ep->fd >= 0)
    {
      ssize_t n;

      do
        n = send (ep->fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      while (n < 0 && errno == EINTR);
      return n == 1;
    }
  return virStreamSend (ep->stream, (const char *) &byte, 1) == 1;
}

/* clock_warp: the guest's heartbeats answer our ticks, one every
 * heartbeat_ms of our wall clock from its hello on (a warped guest's own
 * timers measure no wall time: protocol.h, AIRLOCK_HOST_TICK), and our stop
 * ends its workload wall_timeout_ms after it started.  A thread of its own:
 * a send through a daemon's stream may block, and the evidence must go on
 * being read meanwhile. */
static gpointer
clock_ticker (gpointer data)
{
  AirlockVm *vm = data;
  gint64 period = (gint64) vm->opts.heartbeat_ms * 1000;
  gint64 next_tick = 0;
  gboolean stop_sent = FALSE;

  g_mutex_lock (&vm->lock);
  while (!vm->ticker_quit)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 stop_at = vm->t.workload ? vm->t.workload + (gint64) vm->opts.wall_timeout_ms * 1000 : 0;
      gint64 wake = now + 50 * 1000;
      guint8 byte = 0;

      if (vm->t.hello && !next_tick)
        next_tick = vm->t.hello + period;
      if (stop_at && !stop_sent && now >= stop_at)
        byte = AIRLOCK_HOST_STOP;
      else if (next_tick && now >= next_tick)
        {
          byte = AIRLOCK_HOST_TICK;
          /* After a stall, one tick, not a burst: a beat answers a batch. */
          next_tick += MAX (1, (now - next_tick) / period + 1) * period;
        }
      if (byte)
        {
          gboolean sent;

          g_mutex_unlock (&vm->lock);
          sent = endpoint_send_byte (&vm->evidence_ep, byte);
          g_mutex_lock (&vm->lock);
          if (sent && byte == AIRLOCK_HOST_STOP)
            {
              stop_sent = TRUE;
              vm->t.wall_stop = g_get_monotonic_time ();
            }
          continue;
        }
      if (next_tick)
        wake = MIN (wake, next_tick);
      if (stop_at && !stop_sent)
        wake = MIN (wake, stop_at);
      g_cond_wait_until (&vm->cond, &vm->lock, wake);
    }
  g_mutex_unlock (&vm->lock);
  return NULL;
}

void
airlock_vm_clock_ticker_stop (AirlockVm *vm)
{
  if (!vm->ticker_thread)
    return;
  g_mutex_lock (&vm->lock);
  vm->ticker_quit = TRUE;
  g_cond_broadcast (&vm->cond);
  g_mutex_unlock (&vm->lock);
  g_thread_join (g_steal_pointer (&vm->ticker_thread));
}

static gpointer
evidence_reader (gpointer data)
{
  AirlockVm *vm = data;
  g_autofree char *buf = g_malloc (65536);
  gboolean receipt_due = FALSE, receipt_sent = FALSE;

  for (;;)
    {
      int n = endpoint_recv (&vm->evidence_ep, buf, 65536);

      if (n > 0 && vm->opts.record_func)
        vm->opts.record_func (AIRLOCK_VM_RECORD_EVIDENCE, (const guint8 *) buf, (gsize) n,
                              vm->opts.record_data);
      g_mutex_lock (&vm->lock);
      if (n > 0)
        {
          airlock_channel_feed (vm->channel, (const guint8 *) buf, n, g_get_monotonic_time (),
                                g_get_real_time ());
          receipt_due = airlock_channel_get_state (vm->channel) == AIRLOCK_CHANNEL_COMPLETE;
        }
      else
        {
          airlock_channel_close (vm->channel, g_get_monotonic_time ());
          vm->evidence_eof = TRUE;
        }
      g_cond_broadcast (&vm->cond);
      g_mutex_unlock (&vm->lock);
      if (n <= 0)
        break;
      /* The whole trailer is ours: the guest may power off
       * (protocol.h, AIRLOCK_HOST_RECEIPT). */
      if (receipt_due && !receipt_sent)
        {
          const guint8 receipt = AIRLOCK_HOST_RECEIPT;

          /* Once: without it the guest is destroyed after POWEROFF_GRACE_MS. */
          (void) endpoint_send_all (&vm->evidence_ep, &receipt, 1);
          receipt_sent = TRUE;
        }
    }
  return NULL;
}

/* The workload's stdio port: sends stdin (then end of file), and keeps
 * stdout and stderr.  Nothing on this port is evidence: chunks are only
 * bounded and split by stream. */
static gboolean
send_stdin_chunk (AirlockVm *vm, const guint8 *data, gsize n)
{
  guint8 chunk[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];
  gboolean ok;

  chunk[0] = AIRLOCK_STDIO_STDIN;
  chunk[1] = n == 0 ? AIRLOCK_STDIO_EOF : 0;
  wire_le16 (chunk + 2, (guint16) n);
  if (n)
    memcpy (chunk + AIRLOCK_STDIO_HEADER_SIZE, data, n);
  if (n && vm->opts.record_func)
    vm->opts.record_func (AIRLOCK_VM_RECORD_STDIN, data, n, vm->opts.record_data);
  g_mutex_lock (&vm->stdio_send_lock);
  ok = endpoint_send_all (&vm->stdio_ep, chunk, AIRLOCK_STDIO_HEADER_SIZE + n);
  g_mutex_unlock (&vm->stdio_send_lock);
  return ok;
}

gboolean
airlock_vm_send_winsize (AirlockVm *vm, guint16 rows, guint16 cols, GError **error)
{
  guint8 chunk[AIRLOCK_STDIO_HEADER_SIZE + 4];
  gboolean ok = FALSE;

  g_return_val_if_fail (vm != NULL, FALSE);
  chunk[0] = AIRLOCK_STDIO_WINSIZE;
  chunk[1] = 0;
  wire_le16 (chunk + 2, 4);
  wire_le16 (chunk + AIRLOCK_STDIO_HEADER_SIZE, rows);
  wire_le16 (chunk + AIRLOCK_STDIO_HEADER_SIZE + 2, cols);
  g_mutex_lock (&vm->stdio_send_lock);
  if (vm->tty && vm->stdio_send_ok)
    ok = endpoint_send_all (&vm->stdio_ep, chunk, sizeof chunk);
  g_mutex_unlock (&vm->stdio_send_lock);
  if (!ok)
    g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                 "cannot resize the terminal of domain '%s': %s", vm->name ? vm->name : "(none)",
                 !vm->tty ? "the run has no terminal"
                          : "its stdio port is not connected");
  return ok;
}

/* Stdin: the given bytes, or what the given stream yields as it comes, in
 * chunks, then its end.  The guest buffers what the workload has not read
 * yet (bounded; the port's flow control does the rest). */
static gpointer
stdin_sender (gpointer data)
{
  AirlockVm *vm = data;

  if (vm->stdin_stream)
    {
      guint8 buf[AIRLOCK_STDIO_CHUNK_MAX];

      for (;;)
        {
          gssize n = g_input_stream_read (vm->stdin_stream, buf, sizeof buf, vm->stdin_cancel,
                                          NULL);

          if (n <= 0)
            break;   /* end of file, an error, or the run ended (cancelled) */
          g_atomic_int_set (&vm->stdin_taken, 1);
          if (!send_stdin_chunk (vm, buf, (gsize) n))
            return NULL;
        }
    }
  else
    {
      gsize in_len = vm->stdin_data ? g_bytes_get_size (vm->stdin_data) : 0;
      const guint8 *in = vm->stdin_data ? g_bytes_get_data (vm->stdin_data, NULL) : NULL;

      for (gsize off = 0; off < in_len; off += MIN (in_len - off, (gsize) AIRLOCK_STDIO_CHUNK_MAX))
        if (!send_stdin_chunk (vm, in + off, MIN (in_len - off, (gsize) AIRLOCK_STDIO_CHUNK_MAX)))
          return NULL;
    }
  (void) send_stdin_chunk (vm, NULL, 0);
  return NULL;
}

/* One chunk from the stdio port: stdout and stderr are kept (bounded) and,
 * with an output function, handed on.  Called with vm->lock held. */
static void
stdio_chunk (const AirlockStdioChunk *chunk, gpointer data)
{
  AirlockVm *vm = data;
  GByteArray *out;

  if (!(chunk->stream == AIRLOCK_STDIO_STDOUT || chunk->stream == AIRLOCK_STDIO_STDERR)
      || chunk->len == 0)
    return;
  out = vm->out[chunk->stream - 1];
  if (vm->opts.record_func)
    vm->opts.record_func (chunk->stream == AIRLOCK_STDIO_STDOUT ? AIRLOCK_VM_RECORD_STDOUT
                                                                : AIRLOCK_VM_RECORD_STDERR,
                          chunk->data, chunk->len, vm->opts.record_data);

  if (vm->opts.output_func)
    {
      g_mutex_unlock (&vm->lock);
      vm->opts.output_func ((int) chunk->stream, chunk->data, chunk->len, vm->opts.output_data);
      g_mutex_lock (&vm->lock);
    }

  if (out->len + chunk->len <= AIRLOCK_BOUND_STDIO)
    g_byte_array_append (out, chunk->data, (guint) chunk->len);
  else
    vm->out_truncated = TRUE;
}

/* The workload's stdout and stderr, as chunks (stdio-chunks-private.h).
 * Nothing on this port is evidence: chunks are only bounded and split by
 * stream. */
static gpointer
stdio_worker (gpointer data)
{
  AirlockVm *vm = data;
  g_autofree guint8 *buf = g_malloc (65536);
  g_autoptr (GByteArray) pending = g_byte_array_new ();

  for (;;)
    {
      int n = endpoint_recv (&vm->stdio_ep, (char *) buf, 65536);

      if (n <= 0)
        break;
      g_byte_array_append (pending, buf, n);
      g_mutex_lock (&vm->lock);
      airlock_stdio_take_chunks (pending, stdio_chunk, vm);
      g_mutex_unlock (&vm->lock);
    }
  g_mutex_lock (&vm->lock);
  vm->stdio_eof = TRUE;
  g_cond_broadcast (&vm->cond);
  g_mutex_unlock (&vm->lock);
  return NULL;
}

/* A hostile guest kernel can print forever: keep the head of the console
 * log (AIRLOCK_BOUND_CONSOLE), which holds the boot and the first failure. */
static gpointer
console_reader (gpointer data)
{
  AirlockVm *vm = data;
  g_autofree char *buf = g_malloc (65536);

  for (;;)
    {
      int n = endpoint_recv (&vm->console_ep, buf, 65536);

      g_mutex_lock (&vm->lock);
      if (n > 0)
        {
          if (!vm->t.first_console)
            vm->t.first_console = g_get_monotonic_time ();
          if (vm->console->len + n <= AIRLOCK_BOUND_CONSOLE)
            {
              if (vm->opts.record_func)
                vm->opts.record_func (AIRLOCK_VM_RECORD_CONSOLE, (const guint8 *) buf, (gsize) n,
                                      vm->opts.record_data);
              g_byte_array_append (vm->console, (const guint8 *) buf, n);
            }
          else
            vm->console_truncated = TRUE;
        }
      else
        vm->console_eof = TRUE;
      g_cond_broadcast (&vm->cond);
      g_mutex_unlock (&vm->lock);
      if (n <= 0)
        break;
    }
  return NULL;
}

static int
on_lifecycle (virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
  AirlockVm *vm = opaque;

  if (event != VIR_DOMAIN_EVENT_STOPPED && event != VIR_DOMAIN_EVENT_CRASHED)
    return 0;
  g_mutex_lock (&vm->lock);
  vm->domain_stopped = vm->domain_stopped || event == VIR_DOMAIN_EVENT_STOPPED;
  if (vm->stop_detail_event < 0 || event == VIR_DOMAIN_EVENT_CRASHED)
    {
      vm->stop_detail_event = event;
      vm->stop_detail = detail;
    }
  g_cond_broadcast (&vm->cond);
  g_mutex_unlock (&vm->lock);
  return 0;
}

/* Connects a unix socket to @path.  Returns the fd, or -1 with @error
 * saying why, the socket named as @what. */
static int
connect_unix (const char *path, const char *what, GError **error)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) >= sizeof addr.sun_path)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                   "socket path '%s' is too long for a unix socket", path);
      return -1;
    }
  strcpy (addr.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      int saved = errno;

      if (fd >= 0)
        close (fd);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM, "cannot connect to %s: %s",
                   what, g_strerror (saved));
      return -1;
    }
  return fd;
}

static gboolean
connect_socket (AirlockVm *vm, const char *file, AirlockEndpoint *ep, GError **error)
{
  g_autofree char *path = g_build_filename (vm->socket_dir, file, NULL);
  g_autofree char *what = g_strdup_printf ("'%s' of domain '%s'", path, vm->name);

  ep->fd = connect_unix (path, what, error);
  return ep->fd >= 0;
}

/* A remote hypervisor's network (AIRLOCK_PORT_NET): the channel's bytes
 * are the frames of QEMU's stream netdev, which is what the sinkhole's
 * socket takes, so they pass unread both ways; the sinkhole captures and
 * answers them as it does a local NIC's.
 *
 * The stream is non-blocking, and nothing waits on it in libvirt's event
 * loop.  A blocking virStreamRecv on a remote connection held the stream
 * until data came, so a send to the guest from another thread waited for
 * the guest's next frame; and a callback that wrote to the sinkhole's
 * socket itself blocked the event loop, which is what sends our queued
 * frames to the guest, while the sinkhole waited for us to take its own
 * (each seen: one arm64 gate in four to eight stopped after its
 * controls).  So the stream's callback only says that there is data and
 * stands down; the up thread reads all there is, writes it to the
 * sinkhole, and arms the callback again.  Up: the guest's frames to the
 * sinkhole; at the stream's end our socket is shut, and the sinkhole sees
 * the network end as it sees a local QEMU's. */
static void
net_on_stream (virStreamPtr st, int events, void *opaque)
{
  AirlockVm *vm = opaque;

  (void) virStreamEventUpdateCallback (st, 0);
  g_mutex_lock (&vm->lock);
  vm->net_readable = TRUE;
  g_cond_broadcast (&vm->cond);
  g_mutex_unlock (&vm->lock);
}

static gpointer
net_up (gpointer data)
{
  AirlockVm *vm = data;
  g_autofree char *buf = g_malloc (65536);
  AirlockEndpoint sink = { .fd = vm->net_fd };

  for (;;)
    {
      gboolean quit;

      g_mutex_lock (&vm->lock);
      /* The callback's word, or a look now and then all the same. */
      if (!vm->net_readable && !vm->net_quit)
        g_cond_wait_until (&vm->cond, &vm->lock, g_get_monotonic_time () + 100 * 1000);
      vm->net_readable = FALSE;
      quit = vm->net_quit;
      g_mutex_unlock (&vm->lock);
      if (quit)
        break;
      for (;;)
        {
          int n = virStreamRecv (vm->net_ep.stream, buf, 65536);

          if (n == -2)
            break;
          if (n <= 0 || !endpoint_send_all (&sink, (const guint8 *) buf, (gsize) n))
            goto out;
        }
      (void) virStreamEventUpdateCallback (vm->net_ep.stream, VIR_STREAM_EVENT_READABLE
                                           | VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP);
    }
out:
  (void) shutdown (vm->net_fd, SHUT_RDWR);
  return NULL;
}

/* Down: the sinkhole's frames to the guest, until the sinkhole's socket
 * ends (at teardown we shut it).  A full stream is tried again shortly:
 * the guest's relay reads all the time. */
static gpointer
net_down (gpointer data)
{
  AirlockVm *vm = data;
  g_autofree char *buf = g_malloc (65536);

  for (;;)
    {
      ssize_t n = read (vm->net_fd, buf, 65536);
      char *p = buf;

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      while (n > 0)
        {
          int sent = virStreamSend (vm->net_ep.stream, p, (size_t) n);

          if (sent == -2)
            {
              g_usleep (1000);
              continue;
            }
          if (sent <= 0)
            return NULL;
          p += sent;
          n -= sent;
        }
    }
  return NULL;
}

static gboolean
open_net_port (AirlockVm *vm, GError **error)
{
  const char *path = airlock_sinkhole_proc_socket (vm->sinkhole);
  g_autofree char *what = NULL;

  vm->net_ep.stream = virStreamNew (vm->conn->conn, VIR_STREAM_NONBLOCK);
  if (!vm->net_ep.stream
      || virDomainOpenChannel (vm->dom, AIRLOCK_PORT_NET, vm->net_ep.stream,
                               VIR_DOMAIN_CHANNEL_FORCE) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                   "cannot open channel '%s' of domain '%s': %s", AIRLOCK_PORT_NET,
                   vm->name, airlock_vir_last_error ());
      return FALSE;
    }
  what = g_strdup_printf ("the sinkhole network's socket '%s'", path);
  vm->net_fd = connect_unix (path, what, error);
  if (vm->net_fd < 0)
    return FALSE;
  if (virStreamEventAddCallback (vm->net_ep.stream,
                                 VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR
                                 | VIR_STREAM_EVENT_HANGUP, net_on_stream, vm, NULL) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                   "cannot watch channel '%s' of domain '%s': %s", AIRLOCK_PORT_NET, vm->name,
                   airlock_vir_last_error ());
      return FALSE;
    }
  vm->net_watched = TRUE;
  vm->net_up_thread = g_thread_new ("airlock-net-up", net_up, vm);
  vm->net_down_thread = g_thread_new ("airlock-net-down", net_down, vm);
  return TRUE;
}

void
airlock_vm_net_port_close (AirlockVm *vm)
{
  /* Down first: its read ends when the socket is shut, and it sends on
   * the stream no more; then the stream's callback goes, and the stream. */
  if (vm->net_fd >= 0)
    (void) shutdown (vm->net_fd, SHUT_RDWR);
  if (vm->net_down_thread)
    g_thread_join (g_steal_pointer (&vm->net_down_thread));
  g_mutex_lock (&vm->lock);
  vm->net_quit = TRUE;
  g_cond_broadcast (&vm->cond);
  g_mutex_unlock (&vm->lock);
  if (vm->net_up_thread)
    g_thread_join (g_steal_pointer (&vm->net_up_thread));
  if (vm->net_watched)
    (void) virStreamEventRemoveCallback (vm->net_ep.stream);
  vm->net_watched = FALSE;
  airlock_vm_endpoint_close (&vm->net_ep);
  if (vm->net_fd >= 0)
    {
      close (vm->net_fd);
      vm->net_fd = -1;
    }
}

gboolean
airlock_vm_open_streams (AirlockVm *vm, GError **error)
{
  gsize hello_len;
  const guint8 *hello;
  gboolean sent;

  vm->lifecycle_cb = virConnectDomainEventRegisterAny (vm->conn->conn, vm->dom,
                                                       VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                                       VIR_DOMAIN_EVENT_CALLBACK (on_lifecycle),
                                                       vm, NULL);
  if (vm->socket_dir)
    {
      if (!connect_socket (vm, "console.sock", &vm->console_ep, error)
          || !connect_socket (vm, "evidence.sock", &vm->evidence_ep, error)
          || (vm->stdio && !connect_socket (vm, "stdio.sock", &vm->stdio_ep, error)))
        return FALSE;
    }
  else
    {
      vm->console_ep.stream = virStreamNew (vm->conn->conn, 0);
      if (!vm->console_ep.stream
          || virDomainOpenConsole (vm->dom, NULL, vm->console_ep.stream, VIR_DOMAIN_CONSOLE_FORCE) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                       "cannot open the console of domain '%s': %s", vm->name,
                       airlock_vir_last_error ());
          return FALSE;
        }
      vm->evidence_ep.stream = virStreamNew (vm->conn->conn, 0);
      if (!vm->evidence_ep.stream
          || virDomainOpenChannel (vm->dom, AIRLOCK_PORT_EVIDENCE, vm->evidence_ep.stream,
                                   VIR_DOMAIN_CHANNEL_FORCE) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                       "cannot open channel '%s' of domain '%s': %s", AIRLOCK_PORT_EVIDENCE,
                       vm->name, airlock_vir_last_error ());
          return FALSE;
        }
      if (vm->stdio)
        {
          vm->stdio_ep.stream = virStreamNew (vm->conn->conn, 0);
          if (!vm->stdio_ep.stream
              || virDomainOpenChannel (vm->dom, AIRLOCK_PORT_STDIO, vm->stdio_ep.stream,
                                       VIR_DOMAIN_CHANNEL_FORCE) < 0)
            {
              g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                           "cannot open channel '%s' of domain '%s': %s", AIRLOCK_PORT_STDIO,
                           vm->name, airlock_vir_last_error ());
              return FALSE;
            }
        }
    }
  if (vm->net_port && vm->sinkhole && !open_net_port (vm, error))
    return FALSE;
  /* The host speaks first: the guest writes nothing before it has read the
   * nonce, so no guest byte can be lost before we are connected.  The spec
   * goes in the same write, right behind the hello whose spec_length
   * announces it. */
  hello = airlock_channel_get_host_hello (vm->channel, &hello_len);
  if (vm->spec)
    {
      g_autoptr (GByteArray) message = g_byte_array_sized_new ((guint) (hello_len + g_bytes_get_size (vm->spec)));

      g_byte_array_append (message, hello, (guint) hello_len);
      g_byte_array_append (message, g_bytes_get_data (vm->spec, NULL),
                           (guint) g_bytes_get_size (vm->spec));
      sent = endpoint_send_all (&vm->evidence_ep, message->data, message->len);
    }
  else
    sent = endpoint_send_all (&vm->evidence_ep, hello, hello_len);
  if (!sent)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                   "cannot send the host hello on channel '%s' of domain '%s': %s",
                   AIRLOCK_PORT_EVIDENCE, vm->name,
                   vm->evidence_ep.fd >= 0 ? g_strerror (errno) : airlock_vir_last_error ());
      return FALSE;
    }
  vm->console_thread = g_thread_new ("airlock-console", console_reader, vm);
  vm->evidence_thread = g_thread_new ("airlock-evidence", evidence_reader, vm);
  if (vm->opts.clock_warp)
    vm->ticker_thread = g_thread_new ("airlock-clock", clock_ticker, vm);
  if (vm->stdio)
    {
      g_mutex_lock (&vm->stdio_send_lock);
      vm->stdio_send_ok = TRUE;
      g_mutex_unlock (&vm->stdio_send_lock);
      vm->stdio_thread = g_thread_new ("airlock-stdio", stdio_worker, vm);
      vm->stdin_thread = g_thread_new ("airlock-stdin", stdin_sender, vm);
    }
  return TRUE;
}

void
airlock_vm_endpoint_close (AirlockEndpoint *ep)
{
  if (ep->fd >= 0)
    {
      close (ep->fd);
      ep->fd = -1;
    }
  if (ep->stream)
    {
      (void) virStreamAbort (ep->stream);
      virStreamFree (g_steal_pointer (&ep->stream));
    }
}
