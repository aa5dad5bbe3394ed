#include "config.h"

#include "vm/vm-private.h"

#include "bounds-private.h"
#include "fsutil-private.h"
#include "protocol.h"
#include "wire.h"
#include "evidence/event.h"
#include "vm/domain-xml-private.h"
#include "vm/capture-file-private.h"
#include "vm/sinkhole-proc.h"
#include "vm/stdio-chunks-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_MEMORY_MIB 512
#define DEFAULT_BOOT_TIMEOUT_MS 60000
#define DEFAULT_RUN_SLACK_MS 60000
#define DEFAULT_HEARTBEAT_MS 200
#define DEFAULT_TOLERANCE_MS 5000
#define DEFAULT_GUEST_RUN_MS 1000
#define DEFAULT_WALL_TIMEOUT_MS 30000
/* With a run spec, the guest ends the workload at its timeout, then tears
 * its process tree down and sends the trailer: under TCG that can take a
 * while, and the host must not give up first. */
#define SPEC_RUN_SLACK_MS 30000
/* After its trailer the guest powers itself off.  The evidence is complete
 * by then, so a daemon-run guest gets only this long before it is destroyed. */
#define POWEROFF_GRACE_MS 300
/* A hostile guest kernel can print forever: keep the head of the console
 * log (AIRLOCK_BOUND_CONSOLE), which holds the boot and the first failure. */

/* Where the console or the evidence channel is read: a unix socket we
 * connected to ourselves (embedded driver: QEMU is local and binds its
 * sockets in our directory), or a libvirt stream (a daemon, local or remote).
 * Own sockets avoid libvirt's chardev streams, which can deadlock against
 * the domain's teardown when the guest stops on its own. */
typedef struct {
  int fd;
  virStreamPtr stream;
} AirlockEndpoint;

struct _AirlockVm {
  AirlockArch arch;
  const AirlockGuestImage *image;
  AirlockVmOptions opts;
  char *uri_opt;
  char *cache_dir;
  char *test_mode;
  char **serve;

  AirlockConnection *conn;   /* owned unless conn_borrowed */
  gboolean conn_borrowed;
  char *virt_type;
  char *accel_notice;
  GPtrArray *swept;

  char *run_id;
  char *name;
  char *run_dir;
  char *socket_dir;
  char *pcap_dir;            /* holds net.pcap (NIC frames), or NULL: no NIC */
  char *pcap_path;
  GBytes *pcap;              /* read at teardown, before the files go */
  char *pcap_error;          /* why there is no pcap although there was a NIC */
  AirlockSinkholeProc *sinkhole;  /* the network's process, until teardown */
  GBytes *sinkhole_records;  /* its records, read at teardown */
  char *sinkhole_error;      /* why there are none although there was a NIC */

  GMutex lock;
  GCond cond;
  AirlockChannel *channel;
  GBytes *spec;              /* encoded run spec, or NULL for the boot check */
  AirlockEventLog *events;   /* with a spec */
  guint32 spec_timeout_ms;   /* the spec's time limit, for the run record */
  AirlockRunRecord *record;  /* made once the run is over (airlock_vm_get_record) */
  GByteArray *console;
  gboolean console_truncated;
  gboolean evidence_eof;
  gboolean console_eof;
  gboolean domain_stopped;
  int stop_detail_event;     /* virDomainEventType / detail of the stop, -1 if unknown */
  int stop_detail;
  char *reason;
  AirlockVmTimings t;

  virDomainPtr dom;
  AirlockEndpoint evidence_ep;
  AirlockEndpoint console_ep;
  AirlockEndpoint stdio_ep;
  GThread *evidence_thread;
  GThread *console_thread;
  GThread *stdio_thread;
  char *root_disk_path;
  char *root_disk_serial;
  gboolean stdio;
  GBytes *stdin_data;
  GInputStream *stdin_stream;
  GCancellable *stdin_cancel;
  GThread *stdin_thread;
  GByteArray *out[2];        /* the workload's stdout, stderr */
  gboolean out_truncated;
  gboolean stdio_eof;
  int lifecycle_cb;
  gboolean destroyed_by_us;
  pid_t qemu_pid;            /* embedded, when QEMU is our child (we reap it), else 0 */
  /* Serialises chunks on the stdio port: stdin from its sender thread,
   * window sizes from any thread (airlock_vm_send_winsize()). */
  GMutex stdio_send_lock;
  gboolean stdio_send_ok;    /* under stdio_send_lock: the port is connected */
  gboolean tty;              /* the spec asks for a terminal */
  char *cancel_reason;       /* under lock: airlock_vm_cancel() was called, why */
  /* clock_warp: the thread that sends the guest its ticks and our stop
   * (protocol.h, AIRLOCK_HOST_TICK), until ticker_quit (under lock). */
  GThread *ticker_thread;
  gboolean ticker_quit;
  /* Through a daemon: the connection died under the run (the daemon
   * stopped, crashed or restarted), and what became of the domain. */
  gboolean conn_lost;
  char *conn_lost_outcome;
};

gboolean
airlock_accel_from_string (const char *name, AirlockAccel *ret_accel)
{
  static const char *const names[] = { "auto", "tcg", "kvm" };

  for (unsigned i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (name, names[i]) == 0)
      {
        *ret_accel = (AirlockAccel) i;
        return TRUE;
      }
  return FALSE;
}

static void
copy_options (AirlockVm *vm, const AirlockVmOptions *options)
{
  AirlockVmOptions o = { 0 };

  if (options)
    o = *options;
  vm->uri_opt = g_strdup (o.uri);
  vm->cache_dir = o.cache_dir ? g_strdup (o.cache_dir) : airlock_default_cache_dir ();
  vm->test_mode = g_strdup (o.test_mode);
  vm->serve = g_strdupv ((char **) o.serve);
  if (!o.memory_mib)
    o.memory_mib = DEFAULT_MEMORY_MIB;
  if (!o.vcpus)
    o.vcpus = 1;
  if (!o.boot_timeout_ms)
    o.boot_timeout_ms = DEFAULT_BOOT_TIMEOUT_MS;
  if (!o.heartbeat_ms)
    o.heartbeat_ms = DEFAULT_HEARTBEAT_MS;
  if (!o.heartbeat_tolerance_ms)
    o.heartbeat_tolerance_ms = DEFAULT_TOLERANCE_MS;
  if (!o.guest_run_ms)
    o.guest_run_ms = DEFAULT_GUEST_RUN_MS;
  /* The warped clock is the supervisor's: the boot check keeps its timer. */
  if (!o.spec)
    o.clock_warp = FALSE;
  if (o.clock_warp && !o.wall_timeout_ms)
    o.wall_timeout_ms = DEFAULT_WALL_TIMEOUT_MS;
  /* Under a warped clock the spec's limit is guest time, which can pass
   * in any wall time: the host's own limit is the wall's. */
  if (!o.run_timeout_ms && o.spec)
    o.run_timeout_ms = (guint) MIN ((guint64) (o.clock_warp ? o.wall_timeout_ms : o.spec->timeout_ms)
                                    + SPEC_RUN_SLACK_MS, G_MAXUINT);
  if (!o.run_timeout_ms)
    o.run_timeout_ms = o.guest_run_ms + DEFAULT_RUN_SLACK_MS;
  /* Borrowed: airlock_vm_new() encodes it and forgets the pointer. */
  o.spec = NULL;
  o.uri = vm->uri_opt;
  o.cache_dir = vm->cache_dir;
  o.test_mode = vm->test_mode;
  o.serve = (const char *const *) vm->serve;
  vm->opts = o;
}

static AirlockVm *
vm_alloc (AirlockArch arch, const AirlockGuestImage *image, const AirlockVmOptions *options)
{
  AirlockVm *vm = g_new0 (AirlockVm, 1);
  guint8 id[8];

  vm->arch = arch;
  vm->image = image;
  copy_options (vm, options);
  vm->swept = g_ptr_array_new_with_free_func (g_free);
  g_mutex_init (&vm->lock);
  g_cond_init (&vm->cond);
  g_mutex_init (&vm->stdio_send_lock);
  vm->console = g_byte_array_new ();
  vm->stop_detail_event = -1;
  vm->lifecycle_cb = -1;
  vm->evidence_ep.fd = -1;
  vm->console_ep.fd = -1;
  vm->stdio_ep.fd = -1;
  vm->out[0] = g_byte_array_new ();
  vm->out[1] = g_byte_array_new ();
  for (unsigned i = 0; i < sizeof id; i++)
    id[i] = (guint8) g_random_int_range (0, 256);
  vm->run_id = g_strdup_printf ("%02x%02x%02x%02x%02x%02x%02x%02x",
                                id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]);
  vm->name = g_strdup_printf (AIRLOCK_DOMAIN_PREFIX "%s-%s", airlock_arch_to_string (arch), vm->run_id);
  return vm;
}

AirlockVm *
airlock_vm_new_on (AirlockArch arch, const AirlockGuestImage *image,
                   const AirlockVmOptions *options, AirlockConnection *conn, const char *virt_type)
{
  AirlockVm *vm = vm_alloc (arch, image, options);

  vm->conn = conn;
  vm->conn_borrowed = TRUE;
  vm->virt_type = g_strdup (virt_type);
  return vm;
}

AirlockVm *
airlock_vm_new (AirlockArch arch, const AirlockGuestImage *image, const AirlockVmOptions *options,
                GError **error)
{
  g_autoptr (AirlockVm) vm = NULL;

  g_return_val_if_fail ((unsigned) arch < AIRLOCK_N_ARCHES, NULL);
  g_return_val_if_fail (image != NULL && image->arch == arch, NULL);

  vm = vm_alloc (arch, image, options);
  /* Encoded before anything is booted: a spec the guest would refuse fails
   * here, with the field named, not as an inconclusive run. */
  if (options && options->spec)
    {
      AirlockRunSpec spec = *options->spec;

      /* The guest's half of the warped clock: its limit is guest time, its
       * heartbeats answer our ticks, our stop ends the workload. */
      spec.warp = vm->opts.clock_warp;
      vm->spec_timeout_ms = options->spec->timeout_ms;
      vm->spec = airlock_run_spec_encode (&spec, error);
      if (!vm->spec)
        return NULL;
      if (options->spec->root_disk && !options->root_disk_path)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                       "the run spec names root disk '%s' but no disk file was given",
                       options->spec->root_disk);
          return NULL;
        }
      vm->root_disk_path = g_strdup (options->root_disk_path);
      vm->stdio = options->spec->stdio;
      vm->tty = options->spec->tty;
      vm->stdin_data = options->stdin_data ? g_bytes_ref (options->stdin_data) : NULL;
      vm->stdin_stream = options->stdin_stream ? g_object_ref (options->stdin_stream) : NULL;
      vm->stdin_cancel = g_cancellable_new ();
      vm->root_disk_serial = g_strdup (options->spec->root_disk);
    }
  vm->conn = airlock_connection_open (vm->opts.uri, vm->cache_dir, vm->swept, error);
  if (!vm->conn)
    return NULL;
  if (!airlock_accel_resolve (vm->conn, arch, vm->opts.accel, image, &vm->opts,
                              &vm->virt_type, &vm->accel_notice, error))
    return NULL;
  return g_steal_pointer (&vm);
}

gboolean
airlock_vm_adopt_qemu (GError **error)
{
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cannot make this process a child subreaper for its QEMUs: %s",
                   g_strerror (saved));
      return FALSE;
    }
  /* The reaper thread starts with the first connection
   * (airlock_connection_open()). */
  return TRUE;
}

void
airlock_vm_free (AirlockVm *vm)
{
  if (!vm)
    return;
  /* run() always tears down; this only covers a VM freed without a run. */
  if (vm->dom)
    {
      if (vm->qemu_pid)
        (void) airlock_connection_reap_qemu (vm->qemu_pid);
      (void) virDomainDestroy (vm->dom);
      virDomainFree (vm->dom);
    }
  if (!vm->conn_borrowed)
    airlock_connection_free (vm->conn);
  g_clear_pointer (&vm->channel, airlock_channel_free);
  g_clear_pointer (&vm->spec, g_bytes_unref);
  g_clear_pointer (&vm->record, airlock_run_record_unref);
  g_clear_pointer (&vm->events, airlock_event_log_free);
  g_clear_pointer (&vm->stdin_data, g_bytes_unref);
  g_clear_object (&vm->stdin_stream);
  g_clear_object (&vm->stdin_cancel);
  g_clear_pointer (&vm->root_disk_path, g_free);
  g_clear_pointer (&vm->root_disk_serial, g_free);
  for (int i = 0; i < 2; i++)
    g_clear_pointer (&vm->out[i], g_byte_array_unref);
  g_byte_array_unref (vm->console);
  g_ptr_array_unref (vm->swept);
  g_mutex_clear (&vm->lock);
  g_cond_clear (&vm->cond);
  g_mutex_clear (&vm->stdio_send_lock);
  g_free (vm->uri_opt);
  g_free (vm->cache_dir);
  g_free (vm->test_mode);
  g_free (vm->virt_type);
  g_free (vm->accel_notice);
  g_free (vm->run_id);
  g_free (vm->name);
  g_free (vm->run_dir);
  g_free (vm->socket_dir);
  g_free (vm->pcap_dir);
  g_free (vm->pcap_path);
  g_clear_pointer (&vm->pcap, g_bytes_unref);
  g_free (vm->pcap_error);
  g_clear_pointer (&vm->sinkhole, airlock_sinkhole_proc_free);
  g_clear_pointer (&vm->sinkhole_records, g_bytes_unref);
  g_free (vm->sinkhole_error);
  g_strfreev (vm->serve);
  g_free (vm->reason);
  g_free (vm->cancel_reason);
  g_free (vm->conn_lost_outcome);
  g_free (vm);
}

static void
on_frame (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  AirlockVm *vm = user_data;

  /* Called from feed(), with vm->lock held. */
  if (frame->type == AIRLOCK_FRAME_HELLO && !vm->t.hello)
    vm->t.hello = frame->received_mono_us;
  else if (frame->type == AIRLOCK_FRAME_TRAILER && !vm->t.trailer)
    vm->t.trailer = frame->received_mono_us;
  else if (frame->type == AIRLOCK_FRAME_EVENT && vm->events)
    {
      g_autoptr (GError) error = NULL;

      /* A record the host cannot place is a malformed record: the
       * evidence is in doubt, so the run is inconclusive. */
      if (!airlock_event_log_add_frame (vm->events, frame, &error))
        {
          g_autofree char *why = g_strdup_printf ("malformed event: %s", error->message);

          airlock_channel_fail (channel, AIRLOCK_ANOMALY_MALFORMED, why);
        }
      else
        {
          GPtrArray *events = airlock_event_log_get_events (vm->events);
          const AirlockEvent *ev = events->pdata[events->len - 1];
          const AirlockEvent *call = ev->kind == AIRLOCK_EVENT_RESULT
                                         ? airlock_event_log_lookup (vm->events, ev->ref) : NULL;

          /* The wall-time limit of a warped clock counts from here, as the
           * guest's own limit counts from the workload's start. */
          if (ev->kind == AIRLOCK_EVENT_WORKLOAD_START && ev->phase == AIRLOCK_PHASE_WORKLOAD
              && !vm->t.workload)
            {
              vm->t.workload = frame->received_mono_us;
              g_cond_broadcast (&vm->cond);
            }
          if (vm->opts.event_func)
            vm->opts.event_func (ev, call, vm->opts.event_data);
        }
    }
}

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

static void
clock_ticker_stop (AirlockVm *vm)
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

  for (;;)
    {
      int n = endpoint_recv (&vm->evidence_ep, buf, 65536);

      if (n > 0 && vm->opts.record_func)
        vm->opts.record_func (AIRLOCK_VM_RECORD_EVIDENCE, (const guint8 *) buf, (gsize) n,
                              vm->opts.record_data);
      g_mutex_lock (&vm->lock);
      if (n > 0)
        airlock_channel_feed (vm->channel, (const guint8 *) buf, n, g_get_monotonic_time (),
                              g_get_real_time ());
      else
        {
          airlock_channel_close (vm->channel, g_get_monotonic_time ());
          vm->evidence_eof = TRUE;
        }
      g_cond_broadcast (&vm->cond);
      g_mutex_unlock (&vm->lock);
      if (n <= 0)
        break;
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

GBytes *
airlock_vm_get_pcap (AirlockVm *vm)
{
  return vm->pcap ? g_bytes_ref (vm->pcap) : NULL;
}

const char *
airlock_vm_get_pcap_error (AirlockVm *vm)
{
  return vm->pcap_error;
}

GBytes *
airlock_vm_get_stdout (AirlockVm *vm)
{
  return g_bytes_new (vm->out[0]->data, vm->out[0]->len);
}

GBytes *
airlock_vm_get_stderr (AirlockVm *vm)
{
  return g_bytes_new (vm->out[1]->data, vm->out[1]->len);
}

gboolean
airlock_vm_get_output_truncated (AirlockVm *vm)
{
  return vm->out_truncated;
}

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

static void
set_reason (AirlockVm *vm, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
set_reason (AirlockVm *vm, const char *fmt, ...)
{
  va_list ap;

  if (vm->reason)
    return;
  va_start (ap, fmt);
  vm->reason = g_strdup_vprintf (fmt, ap);
  va_end (ap);
}

/* The kernel's panic line from the console, if it panicked. */
static char *
find_panic_line (GByteArray *console)
{
  g_autofree char *text = NULL;
  const char *p;
  const char *end;

  if (console->len == 0)
    return NULL;
  text = g_strndup ((const char *) console->data, console->len);
  p = strstr (text, "Kernel panic - not syncing");
  if (!p)
    return NULL;
  end = strpbrk (p, "\r\n");
  return g_strndup (p, end ? (gsize) (end - p) : strlen (p));
}

/* The user QEMU runs as under the local daemon, from its capabilities. */
static gboolean
daemon_qemu_user (AirlockVm *vm, guint32 *ret_uid, guint32 *ret_gid, GError **error)
{
  char *caps = virConnectGetCapabilities (vm->conn->conn);
  gboolean found = caps && airlock_capture_qemu_user (caps, vm->virt_type, ret_uid, ret_gid);

  free (caps);
  if (!found)
    g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                 "cannot tell which user QEMU runs as under '%s' (no DAC label for '%s' domains "
                 "in its capabilities): the network's socket cannot be given to it alone",
                 vm->conn->uri, vm->virt_type);
  return found;
}

static char *
build_cmdline (AirlockVm *vm)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, AIRLOCK_CMDLINE_RUN_MS "%u", vm->opts.guest_run_ms);
  if (vm->test_mode)
    g_string_append_printf (s, " " AIRLOCK_CMDLINE_TEST "%s", vm->test_mode);
  return g_string_free (s, FALSE);
}

/* The run's network: airlock's sinkhole process (sinkhole-proc.h), which
 * QEMU's NIC connects to and which writes the capture.  Runs with a
 * workload get a NIC; the boot check does not need one.  Under the
 * embedded driver QEMU is our child, running as us: the private socket
 * directory.  Through a local daemon QEMU runs as its own user: a
 * directory it can traverse (0711: nobody else can list it or put a file
 * in it) and a socket given to QEMU's user alone (0600), never
 * world-writable: whoever connects first is the guest's network.  A
 * remote hypervisor's QEMU cannot reach a socket here: no NIC there, and a
 * run that needs the capture says so. */
static gboolean
prepare_network (AirlockVm *vm, const char *owner, GError **error)
{
  guint32 qemu_uid = 0, qemu_gid = 0;
  gboolean give = FALSE;

  if (!vm->spec || vm->opts.no_network)
    return TRUE;
  if (vm->conn->embedded)
    vm->pcap_dir = g_strdup (vm->socket_dir);
  else if (g_str_has_prefix (vm->conn->uri, "qemu:///"))
    {
      g_autofree char *runtime = airlock_runtime_dir (error);
      g_autofree char *owner_file = NULL;

      if (!runtime)
        return FALSE;
      vm->pcap_dir = g_strdup_printf ("%s/%s-net", runtime, vm->run_id);
      if (g_mkdir_with_parents (vm->pcap_dir, 0700) < 0 || chmod (runtime, 0711) < 0
          || chmod (vm->pcap_dir, 0711) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                       "cannot create the network directory '%s': %s", vm->pcap_dir,
                       g_strerror (errno));
          return FALSE;
        }
      owner_file = g_build_filename (vm->pcap_dir, "owner", NULL);
      if (!g_file_set_contents (owner_file, owner, -1, error))
        return FALSE;
      if (!daemon_qemu_user (vm, &qemu_uid, &qemu_gid, error))
        return FALSE;
      if (qemu_uid != geteuid ())
        {
          if (geteuid () != 0)
            {
              g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                           "QEMU runs as uid %u under '%s': only root can give it the "
                           "network's socket; run as root, or use the embedded driver "
                           "(--connect qemu:///embedded)", qemu_uid, vm->conn->uri);
              return FALSE;
            }
          give = TRUE;
        }
    }
  else
    return TRUE;
  vm->sinkhole = airlock_sinkhole_proc_start (vm->pcap_dir, give, qemu_uid, qemu_gid,
                                              vm->opts.serve, error);
  if (!vm->sinkhole)
    return FALSE;
  vm->pcap_path = g_strdup (airlock_sinkhole_proc_pcap (vm->sinkhole));
  return TRUE;
}

static gboolean
prepare_run_dir (AirlockVm *vm, GError **error)
{
  const AirlockOwner *self = airlock_owner_self ();
  g_autofree char *owner_file = NULL;
  g_autofree char *owner = NULL;

  vm->run_dir = g_build_filename (vm->cache_dir, "runs", vm->run_id, NULL);
  if (g_mkdir_with_parents (vm->run_dir, 0700) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "cannot create run directory '%s': %s", vm->run_dir, g_strerror (errno));
      return FALSE;
    }
  /* Lets a later run remove this directory if we crash (connection.c). */
  owner_file = g_build_filename (vm->run_dir, "owner", NULL);
  owner = g_strdup_printf ("%s %s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "\n", self->boot_id,
                           self->host, self->pid, self->start_time);
  if (!g_file_set_contents (owner_file, owner, -1, error))
    return FALSE;
  if (vm->conn->embedded)
    {
      g_autofree char *runtime = airlock_runtime_dir (error);
      g_autofree char *sock_owner = NULL;

      if (!runtime)
        return FALSE;
      vm->socket_dir = g_build_filename (runtime, vm->run_id, NULL);
      if (g_mkdir_with_parents (vm->socket_dir, 0700) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                       "cannot create socket directory '%s': %s", vm->socket_dir, g_strerror (errno));
          return FALSE;
        }
      sock_owner = g_build_filename (vm->socket_dir, "owner", NULL);
      if (!g_file_set_contents (sock_owner, owner, -1, error))
        return FALSE;
    }
  return prepare_network (vm, owner, error);
}

static gboolean
start_domain (AirlockVm *vm, GError **error)
{
  const AirlockOwner *self = airlock_owner_self ();
  g_autofree char *cmdline = build_cmdline (vm);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *xml = NULL;
  const char *emulator_env = g_getenv (vm->arch == AIRLOCK_ARCH_AMD64 ? "AIRLOCK_QEMU_X86_64"
                                                                      : "AIRLOCK_QEMU_AARCH64");
  AirlockDomainSpec spec = {
    .arch = vm->arch,
    .name = vm->name,
    .uuid = uuid,
    .virt_type = vm->virt_type,
    .emulator = (emulator_env && *emulator_env) ? emulator_env : NULL,
    .memory_mib = vm->opts.memory_mib,
    .vcpus = vm->opts.vcpus,
    .kernel = vm->image->kernel_path,
    .initrd = vm->image->initramfs_path,
    .cmdline = cmdline,
    .arm64_cpu_max = vm->opts.arm64_cpu_max,
    .icount = vm->opts.icount || vm->opts.clock_warp,
    /* The embedded driver (libvirt >= 6.1) runs the libvirt we load, which
     * takes <qemu:capabilities> (5.5+); a daemon may be any version. */
    .short_cpu_check = vm->conn->embedded,
    .owner_boot_id = self->boot_id,
    .owner_host = self->host,
    .owner_pid = self->pid,
    .owner_start_time = self->start_time,
    .run_dir = vm->run_dir,
    .socket_dir = vm->socket_dir,
    .root_disk = vm->root_disk_path,
    .root_disk_serial = vm->root_disk_serial,
    .stdio = vm->stdio,
    .net_socket = vm->sinkhole ? airlock_sinkhole_proc_socket (vm->sinkhole) : NULL,
  };
  unsigned flags = VIR_DOMAIN_START_PAUSED;

  /* Autodestroy ties the domain to our connection; the embedded driver does
   * not offer it, so there the sweep in connection.c does that job. */
  if (!vm->conn->embedded)
    flags |= VIR_DOMAIN_START_AUTODESTROY;
  xml = airlock_domain_xml_build (&spec);
  vm->t.begin = g_get_monotonic_time ();
  vm->dom = virDomainCreateXML (vm->conn->conn, xml, flags);
  if (!vm->dom)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "cannot start %s domain '%s' on '%s': %s", airlock_arch_to_string (vm->arch),
                   vm->name, vm->conn->uri, airlock_vir_last_error ());
      return FALSE;
    }
  vm->t.created = g_get_monotonic_time ();
  if (vm->conn->embedded)
    {
      gboolean is_child;
      pid_t pid = airlock_connection_qemu_pid (vm->conn, vm->name, &is_child);

      if (is_child)
        {
          airlock_connection_claim_qemu (pid);
          vm->qemu_pid = pid;
        }
    }
  return TRUE;
}

static gboolean
connect_socket (AirlockVm *vm, const char *file, AirlockEndpoint *ep, GError **error)
{
  g_autofree char *path = g_build_filename (vm->socket_dir, file, NULL);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) >= sizeof addr.sun_path)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                   "socket path '%s' is too long for a unix socket", path);
      return FALSE;
    }
  strcpy (addr.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_STREAM,
                   "cannot connect to '%s' of domain '%s': %s", path, vm->name, g_strerror (saved));
      return FALSE;
    }
  ep->fd = fd;
  return TRUE;
}

static gboolean
open_streams (AirlockVm *vm, GError **error)
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

/* Follows the run until the channel is final or the domain stops.
 * Called and returns with vm->lock held. */
static void
follow_run (AirlockVm *vm)
{
  gint64 boot_deadline = vm->t.started + (gint64) vm->opts.boot_timeout_ms * 1000;

  for (;;)
    {
      AirlockChannelState state = airlock_channel_get_state (vm->channel);
      gint64 now = g_get_monotonic_time ();

      if (state == AIRLOCK_CHANNEL_COMPLETE || state == AIRLOCK_CHANNEL_INCONCLUSIVE)
        return;
      if (vm->evidence_eof || vm->domain_stopped)
        return;
      if (vm->cancel_reason)
        {
          set_reason (vm, "%s", vm->cancel_reason);
          airlock_channel_fail (vm->channel, AIRLOCK_ANOMALY_EXTERNAL, vm->cancel_reason);
          return;
        }
      if (state == AIRLOCK_CHANNEL_AWAITING_HELLO && now > boot_deadline)
        {
          g_autofree char *why = g_strdup_printf ("boot timeout: no hello from the guest within %u ms",
                                                  vm->opts.boot_timeout_ms);
          set_reason (vm, "%s", why);
          airlock_channel_fail (vm->channel, AIRLOCK_ANOMALY_NO_HELLO, why);
          return;
        }
      if (state == AIRLOCK_CHANNEL_OPEN && vm->t.hello
          && now > vm->t.hello + (gint64) vm->opts.run_timeout_ms * 1000)
        {
          g_autofree char *why = g_strdup_printf ("run timeout: no trailer within %u ms of the hello",
                                                  vm->opts.run_timeout_ms);
          set_reason (vm, "%s", why);
          airlock_channel_fail (vm->channel, AIRLOCK_ANOMALY_EXTERNAL, why);
          return;
        }
      airlock_channel_check_time (vm->channel, now);
      g_cond_wait_until (&vm->cond, &vm->lock, now + 50 * 1000);
    }
}

/* After a complete trailer the guest powers itself off. */
static void
wait_for_poweroff (AirlockVm *vm)
{
  gint64 deadline = g_get_monotonic_time () + POWEROFF_GRACE_MS * 1000;

  while (!vm->domain_stopped && !(vm->evidence_eof && vm->console_eof))
    if (!g_cond_wait_until (&vm->cond, &vm->lock, deadline))
      break;
}

/* Waits until libvirt has removed the stopped domain, so that its
 * chardev teardown has run before we touch its streams (aborting a stream
 * while libvirt frees the domain's chardevs deadlocks in libvirt 9.0). */
static void
wait_domain_gone (AirlockVm *vm, const char *uuid)
{
  /* Our domains are transient: gone from the list once stopped. */
  for (int i = 0; i < 100; i++)
    {
      virDomainPtr d = virDomainLookupByUUIDString (vm->conn->conn, uuid);

      if (!d)
        break;
      virDomainFree (d);
      g_usleep (20 * 1000);
    }
  /* Removal from the list comes just before the last reference is dropped. */
  g_usleep (100 * 1000);
}

static void
endpoint_close (AirlockEndpoint *ep)
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

/* Called with vm->lock held. */
static void
wait_for_stop_event (AirlockVm *vm, guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (!vm->domain_stopped)
    if (!g_cond_wait_until (&vm->cond, &vm->lock, deadline))
      break;
}

/* How long a run whose daemon went away waits for it to come back, to
 * destroy its domain there. */
#define RECONNECT_MS 15000

/* Is the connection to a daemon dead (it stopped, crashed or restarted)? */
static gboolean
connection_lost (AirlockVm *vm)
{
  return !vm->conn->embedded && virConnectIsAlive (vm->conn->conn) != 1;
}

/* The daemon went away under the run.  AUTODESTROY belonged to the old
 * connection: a daemon that crashed and was restarted takes the still
 * running QEMU back without it, so the domain would run on, unwatched,
 * until the guest's own timeout.  Open the URI again (the daemon may still
 * be starting), destroy the domain there, and keep the new connection for
 * what the run still asks of libvirt (versions for the bundle). */
static void
destroy_after_connection_loss (AirlockVm *vm, const char *uuid)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) RECONNECT_MS * 1000;
  virConnectPtr c = NULL;
  virDomainPtr d;

  vm->conn_lost = TRUE;
  while (!(c = virConnectOpen (vm->conn->uri)) && g_get_monotonic_time () < deadline)
    g_usleep (200 * 1000);
  if (!c)
    {
      vm->conn_lost_outcome = g_strdup_printf ("cannot reconnect to destroy domain '%s' "
                                               "(the next run removes it): %s",
                                               vm->name, airlock_vir_last_error ());
      return;
    }
  d = uuid[0] ? virDomainLookupByUUIDString (c, uuid) : NULL;
  if (!d || virDomainIsActive (d) != 1)
    vm->conn_lost_outcome = g_strdup_printf ("domain '%s' was already gone", vm->name);
  else if (virDomainDestroy (d) == 0)
    {
      vm->conn_lost_outcome = g_strdup_printf ("domain '%s' destroyed through a new connection",
                                               vm->name);
      g_mutex_lock (&vm->lock);
      vm->destroyed_by_us = TRUE;
      g_mutex_unlock (&vm->lock);
    }
  else
    vm->conn_lost_outcome = g_strdup_printf ("cannot destroy domain '%s' (the next run removes "
                                             "it): %s", vm->name, airlock_vir_last_error ());
  if (d)
    virDomainFree (d);
  if (vm->lifecycle_cb >= 0)
    (void) virConnectDomainEventDeregisterAny (vm->conn->conn, vm->lifecycle_cb);
  vm->lifecycle_cb = -1;
  virConnectClose (vm->conn->conn);
  vm->conn->conn = c;
}

/* A reaped pid can be reused: take it out of the VM as it goes. */
static pid_t
steal_pid (pid_t *pid)
{
  pid_t p = *pid;

  *pid = 0;
  return p;
}

static void
teardown (AirlockVm *vm)
{
  char uuid[VIR_UUID_STRING_BUFLEN] = { 0 };

  /* Embedded: QEMU is our local child.  Under TCG it needs over a second to
   * obey libvirt's SIGTERM, holding the domain's lock meanwhile, whether we
   * destroy it or the guest powered off; the run is decided, so kill it
   * first, before any libvirt call on the domain. */
  /* When QEMU is our child, reap it here too: libvirt waits until the
   * killed process is gone, and an orphan lasts until PID 1 reaps it (about
   * 2 s on some hosts, a second of every teardown). */
  if (vm->dom && vm->conn->embedded
      && (vm->qemu_pid ? airlock_connection_reap_qemu (steal_pid (&vm->qemu_pid))
                       : airlock_connection_kill_qemu (vm->conn, vm->name)))
    {
      g_mutex_lock (&vm->lock);
      vm->destroyed_by_us = TRUE;
      g_mutex_unlock (&vm->lock);
    }
  if (vm->dom)
    {
      (void) virDomainGetUUIDString (vm->dom, uuid);
      if (connection_lost (vm))
        destroy_after_connection_loss (vm, uuid);
      /* Destroying an already stopped transient domain fails harmlessly. */
      else if (virDomainIsActive (vm->dom) == 1)
        {
          g_mutex_lock (&vm->lock);
          vm->destroyed_by_us = TRUE;
          g_mutex_unlock (&vm->lock);
          (void) virDomainDestroy (vm->dom);
        }
    }
  /* QEMU gone, so a tick blocked in a stream returns: nothing of ours is
   * sent from here on. */
  clock_ticker_stop (vm);
  /* QEMU gone: its sockets close, so the readers see end of file.  A socket
   * of ours is also shut down, in case QEMU outlived a failed destroy. */
  if (vm->evidence_ep.fd >= 0)
    (void) shutdown (vm->evidence_ep.fd, SHUT_RDWR);
  if (vm->console_ep.fd >= 0)
    (void) shutdown (vm->console_ep.fd, SHUT_RDWR);
  if (vm->stdio_ep.fd >= 0)
    (void) shutdown (vm->stdio_ep.fd, SHUT_RDWR);
  if (vm->evidence_thread)
    g_thread_join (g_steal_pointer (&vm->evidence_thread));
  if (vm->console_thread)
    g_thread_join (g_steal_pointer (&vm->console_thread));
  if (vm->stdio_thread && vm->stdio_ep.fd >= 0)
    g_thread_join (g_steal_pointer (&vm->stdio_thread));
  /* libvirt delivers the stop event asynchronously; it says why the domain
   * stopped (QEMU died, crashed, destroyed from outside), so wait for it
   * before letting the callback go. */
  if (vm->lifecycle_cb >= 0)
    {
      g_mutex_lock (&vm->lock);
      wait_for_stop_event (vm, 2000);
      g_mutex_unlock (&vm->lock);
      (void) virConnectDomainEventDeregisterAny (vm->conn->conn, vm->lifecycle_cb);
    }
  vm->lifecycle_cb = -1;
  if ((vm->evidence_ep.stream || vm->console_ep.stream || vm->stdio_ep.stream) && uuid[0])
    wait_domain_gone (vm, uuid);
  endpoint_close (&vm->evidence_ep);
  endpoint_close (&vm->console_ep);
  /* Through a daemon, the stream's reader returns once the stream is
   * aborted; a sender blocked reading its stdin stream is cancelled. */
  if (vm->stdin_cancel)
    g_cancellable_cancel (vm->stdin_cancel);
  if (vm->stdin_thread)
    g_thread_join (g_steal_pointer (&vm->stdin_thread));
  /* A window size sent from another thread now fails instead of reaching
   * a closed (or reused) descriptor. */
  g_mutex_lock (&vm->stdio_send_lock);
  vm->stdio_send_ok = FALSE;
  endpoint_close (&vm->stdio_ep);
  g_mutex_unlock (&vm->stdio_send_lock);
  if (vm->stdio_thread)
    g_thread_join (g_steal_pointer (&vm->stdio_thread));
  if (vm->dom)
    virDomainFree (g_steal_pointer (&vm->dom));
  /* QEMU is gone: the sinkhole saw its end of the socket close and
   * writes its last records; then the capture is whole.  Kept in memory
   * for the caller, up to AIRLOCK_BOUND_CAPTURE, checked before a byte is
   * read: the guest decides how large it is. */
  if (vm->sinkhole)
    {
      vm->sinkhole_records = airlock_sinkhole_proc_finish (vm->sinkhole, &vm->sinkhole_error);
      g_clear_pointer (&vm->sinkhole, airlock_sinkhole_proc_free);
    }
  if (vm->pcap_path)
    {
      g_autoptr (GError) perr = NULL;

      vm->pcap = airlock_read_file_bounded (vm->pcap_path, AIRLOCK_BOUND_CAPTURE, &perr);
      if (!vm->pcap)
        vm->pcap_error = g_strdup_printf ("the capture was refused: %s", perr->message);
    }
  if (vm->run_dir)
    airlock_rm_rf (vm->run_dir);
  if (vm->socket_dir)
    airlock_rm_rf (vm->socket_dir);
  if (vm->pcap_dir && g_strcmp0 (vm->pcap_dir, vm->socket_dir) != 0)
    airlock_rm_rf (vm->pcap_dir);
  vm->t.stopped = g_get_monotonic_time ();
}

static void
explain_end (AirlockVm *vm)
{
  g_autofree char *panic = NULL;
  AirlockChannelState state = airlock_channel_get_state (vm->channel);
  AirlockAnomaly anomaly = airlock_channel_get_anomaly (vm->channel);

  if (state == AIRLOCK_CHANNEL_COMPLETE)
    return;
  /* The most specific cause first: a panic explains a closed channel, and a
   * protocol anomaly explains why we destroyed the domain. */
  panic = find_panic_line (vm->console);
  if (panic)
    set_reason (vm, "guest kernel panic: %s", panic);
  else if (anomaly != AIRLOCK_ANOMALY_NONE && anomaly != AIRLOCK_ANOMALY_CLOSED_EARLY
           && anomaly != AIRLOCK_ANOMALY_EXTERNAL && airlock_channel_get_reason (vm->channel))
    set_reason (vm, "%s", airlock_channel_get_reason (vm->channel));
  else if (vm->conn_lost)
    set_reason (vm, "the connection to libvirt '%s' was lost before the trailer (its daemon "
                "stopped or restarted); %s", vm->conn->uri, vm->conn_lost_outcome);
  else if (vm->stop_detail_event == VIR_DOMAIN_EVENT_CRASHED)
    set_reason (vm, "the guest crashed");
  else if (vm->stop_detail_event == VIR_DOMAIN_EVENT_STOPPED
           && vm->stop_detail == VIR_DOMAIN_EVENT_STOPPED_FAILED)
    set_reason (vm, "QEMU died before the trailer");
  else if (vm->stop_detail_event == VIR_DOMAIN_EVENT_STOPPED
           && vm->stop_detail == VIR_DOMAIN_EVENT_STOPPED_DESTROYED && !vm->destroyed_by_us)
    set_reason (vm, "the domain was destroyed from outside before the trailer");
  else if (airlock_channel_get_reason (vm->channel))
    set_reason (vm, "%s", airlock_channel_get_reason (vm->channel));
  else
    set_reason (vm, "the VM stopped before the trailer");
  airlock_channel_fail (vm->channel, AIRLOCK_ANOMALY_EXTERNAL, vm->reason);
}

gboolean
airlock_vm_run (AirlockVm *vm, GError **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (vm != NULL && vm->channel == NULL, FALSE);

  vm->channel = airlock_channel_new_random (vm->opts.heartbeat_ms, vm->opts.heartbeat_tolerance_ms);
  airlock_channel_set_frame_func (vm->channel, on_frame, vm);
  if (vm->spec)
    {
      airlock_channel_set_spec (vm->channel, vm->spec);
      vm->events = airlock_event_log_new ();
    }

  if (!prepare_run_dir (vm, error) || !start_domain (vm, error) || !open_streams (vm, error))
    ok = FALSE;
  else if (virDomainResume (vm->dom) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "cannot resume domain '%s': %s", vm->name, airlock_vir_last_error ());
      ok = FALSE;
    }

  if (ok)
    {
      g_mutex_lock (&vm->lock);
      vm->t.started = g_get_monotonic_time ();
      follow_run (vm);
      /* Through a daemon, let the guest power off cleanly for a moment;
       * embedded, teardown kills QEMU at once (the evidence is complete). */
      if (airlock_channel_get_state (vm->channel) == AIRLOCK_CHANNEL_COMPLETE && !vm->conn->embedded)
        wait_for_poweroff (vm);
      else if (vm->evidence_eof && airlock_channel_get_state (vm->channel) != AIRLOCK_CHANNEL_COMPLETE
               && !connection_lost (vm))
        /* The channel closed under us: QEMU died or the guest stopped.  Let
         * libvirt notice first, so its stop event says which, instead of
         * our destroy.  (A dead connection delivers no event.) */
        wait_for_stop_event (vm, 2000);
      g_mutex_unlock (&vm->lock);
    }
  else
    airlock_channel_fail (vm->channel, AIRLOCK_ANOMALY_EXTERNAL,
                          error && *error ? (*error)->message : "the VM did not start");

  teardown (vm);

  g_mutex_lock (&vm->lock);
  if (ok)
    explain_end (vm);
  else
    set_reason (vm, "%s", error && *error ? (*error)->message : "the VM did not start");
  g_mutex_unlock (&vm->lock);
  return ok;
}

void
airlock_vm_cancel (AirlockVm *vm, const char *reason)
{
  g_return_if_fail (vm != NULL && reason != NULL);
  g_mutex_lock (&vm->lock);
  if (!vm->cancel_reason)
    vm->cancel_reason = g_strdup (reason);
  g_cond_broadcast (&vm->cond);
  g_mutex_unlock (&vm->lock);
}

gboolean
airlock_vm_is_complete (AirlockVm *vm)
{
  return vm->channel && airlock_channel_get_state (vm->channel) == AIRLOCK_CHANNEL_COMPLETE;
}

const char *
airlock_vm_get_reason (AirlockVm *vm)
{
  return airlock_vm_is_complete (vm) ? NULL : vm->reason;
}

AirlockChannel *
airlock_vm_get_channel (AirlockVm *vm)
{
  return vm->channel;
}

AirlockEventLog *
airlock_vm_get_events (AirlockVm *vm)
{
  return vm->events;
}

GBytes *
airlock_vm_get_console (AirlockVm *vm)
{
  GBytes *b;

  g_mutex_lock (&vm->lock);
  b = g_bytes_new (vm->console->data, vm->console->len);
  g_mutex_unlock (&vm->lock);
  return b;
}

const AirlockVmTimings *
airlock_vm_get_timings (AirlockVm *vm)
{
  return &vm->t;
}

const char *
airlock_vm_get_accel (AirlockVm *vm)
{
  return g_strcmp0 (vm->virt_type, "kvm") == 0 ? "kvm" : "tcg";
}

const char *
airlock_vm_get_accel_notice (AirlockVm *vm)
{
  return vm->accel_notice;
}

GPtrArray *
airlock_vm_get_swept (AirlockVm *vm)
{
  return vm->swept;
}

const char *
airlock_vm_get_uri (AirlockVm *vm)
{
  return vm->conn ? vm->conn->uri : NULL;
}

const char *
airlock_vm_get_domain_name (AirlockVm *vm)
{
  return vm->name;
}

void
airlock_vm_get_heartbeat (AirlockVm *vm, guint *ret_period_ms, guint *ret_tolerance_ms)
{
  *ret_period_ms = vm->opts.heartbeat_ms;
  *ret_tolerance_ms = vm->opts.heartbeat_tolerance_ms;
}

static char *
version_string (gboolean ok, unsigned long v)
{
  if (!ok)
    return g_strdup ("unknown");
  return g_strdup_printf ("%lu.%lu.%lu", v / 1000000, (v / 1000) % 1000, v % 1000);
}

char *
airlock_vm_get_qemu_version (AirlockVm *vm)
{
  unsigned long v = 0;

  return version_string (vm->conn && virConnectGetVersion (vm->conn->conn, &v) == 0, v);
}

char *
airlock_vm_get_libvirt_version (AirlockVm *vm)
{
  unsigned long v = 0;

  return version_string (vm->conn && virConnectGetLibVersion (vm->conn->conn, &v) == 0, v);
}

AirlockRunRecord *
airlock_vm_get_record (AirlockVm *vm)
{
  if (!vm->record)
    {
      g_autoptr (GBytes) pcap = airlock_vm_get_pcap (vm);
      g_autoptr (GBytes) out = airlock_vm_get_stdout (vm);
      g_autoptr (GBytes) err = airlock_vm_get_stderr (vm);
      g_autoptr (GBytes) console = airlock_vm_get_console (vm);
      g_autofree char *qemu = airlock_vm_get_qemu_version (vm);
      g_autofree char *libvirt = airlock_vm_get_libvirt_version (vm);
      AirlockRunRecordInput in = {
        .arch = vm->arch,
        .complete = airlock_vm_is_complete (vm),
        .incomplete_reason = airlock_vm_get_reason (vm),
        .trailer = vm->channel ? airlock_channel_get_trailer (vm->channel) : NULL,
        .guest_log = vm->channel ? airlock_channel_get_log (vm->channel) : NULL,
        .log = vm->events,
        .pcap = pcap,
        .pcap_error = airlock_vm_get_pcap_error (vm),
        .sinkhole_records = vm->sinkhole_records,
        .sinkhole_error = vm->sinkhole_error,
        /* Under a warped clock the spec's limit is guest time and ours
         * is the wall's. */
        .timeout_ms = vm->opts.clock_warp ? vm->opts.wall_timeout_ms : vm->spec_timeout_ms,
        .clock_warp = vm->opts.clock_warp,
        .guest_time_ms = vm->spec_timeout_ms,
        .channel = vm->channel,
        .stdout_bytes = out,
        .stderr_bytes = err,
        .output_truncated = airlock_vm_get_output_truncated (vm),
        .console = console,
        .accel = airlock_vm_get_accel (vm),
        .uri = airlock_vm_get_uri (vm),
        .domain_name = airlock_vm_get_domain_name (vm),
        .qemu_version = qemu,
        .libvirt_version = libvirt,
      };

      airlock_vm_get_heartbeat (vm, &in.heartbeat_ms, &in.heartbeat_tolerance_ms);

      vm->record = airlock_run_record_new (&in);
    }
  return airlock_run_record_ref (vm->record);
}
