/* One run of a VM, its lifecycle: the options and their defaults, the
 * accelerator chosen (accel.c, with the KVM probe boot it is handed from
 * here), the domain prepared and started paused (domain.c), the streams
 * opened and the host hello sent (streams.c), the guest resumed, the run
 * followed until the channel is final or the domain stops, torn down
 * (teardown.c), and how it ended explained; the run record made from it.
 * The state these files share is vm-state-private.h; what the VM tells its
 * caller, getters.c. */
#include "config.h"

#include "vm/vm-private.h"

#include "fsutil-private.h"
#include "protocol.h"
#include "vm/accel-private.h"
#include "vm/domain-private.h"
#include "vm/domain-xml-private.h"
#include "vm/streams-private.h"
#include "vm/teardown-private.h"
#include "vm/vm-state-private.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#define DEFAULT_MEMORY_MIB 512
#define DEFAULT_BOOT_TIMEOUT_MS 60000
#define DEFAULT_RUN_SLACK_MS 60000
#define DEFAULT_HEARTBEAT_MS 200
#define DEFAULT_TOLERANCE_MS 5000
#define DEFAULT_GUEST_RUN_MS 1000
#define DEFAULT_WALL_TIMEOUT_MS 30000
/* With a run spec, the guest ends the workload at its timeout (its stop
 * signal, then up to AIRLOCK_STOP_GRACE_MS for it to end), then tears its
 * process tree down and sends the trailer: under TCG that can take a
 * while, and the host must not give up first. */
#define SPEC_RUN_SLACK_MS (30000 + AIRLOCK_STOP_GRACE_MS)
/* After its trailer the guest powers itself off.  The evidence is complete
 * by then, so a daemon-run guest gets only this long before it is destroyed. */
#define POWEROFF_GRACE_MS 300

static void
copy_options (AirlockVm *vm, const AirlockVmOptions *options)
{
  AirlockVmOptions o = { 0 };

  if (options)
    o = *options;
  vm->uri_opt = g_strdup (o.uri);
  /* Absolute, as guestimg/inputs.c makes its own: libvirt's embedded
   * driver refuses a relative root (connection.c), and QEMU resolves paths
   * elsewhere than our working directory. */
  if (o.cache_dir)
    vm->cache_dir = g_canonicalize_filename (o.cache_dir, NULL);
  else
    vm->cache_dir = airlock_default_cache_dir ();
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
  vm->net_ep.fd = -1;
  vm->net_fd = -1;
  vm->out[0] = g_byte_array_new ();
  vm->out[1] = g_byte_array_new ();
  for (unsigned i = 0; i < sizeof id; i++)
    id[i] = (guint8) g_random_int_range (0, 256);
  vm->run_id = g_strdup_printf ("%02x%02x%02x%02x%02x%02x%02x%02x",
                                id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]);
  vm->name = g_strdup_printf (AIRLOCK_DOMAIN_PREFIX "%s-%s", airlock_arch_to_string (arch), vm->run_id);
  return vm;
}

/* A VM on an open connection with a fixed libvirt domain type ("kvm" or
 * "qemu"): what the accelerator probe boots.  @conn is borrowed. */
static AirlockVm *
vm_new_on (AirlockArch arch, const AirlockGuestImage *image, const AirlockVmOptions *options,
           AirlockConnection *conn, const char *virt_type)
{
  AirlockVm *vm = vm_alloc (arch, image, options);

  vm->conn = conn;
  vm->conn_borrowed = TRUE;
  vm->virt_type = g_strdup (virt_type);
  return vm;
}

/* A working KVM gets our guest to its hello in well under a second; a
 * broken one (nested virtualisation without the features QEMU needs) aborts
 * or spins forever.  The probe gives it this long. */
#define KVM_PROBE_TIMEOUT_MS 8000

/* The accelerator's probe (accel-private.h): boots @data's guest once
 * under KVM, as a boot check.  Returns NULL when it reached its trailer,
 * else why not.  Here rather than in accel.c, which only decides: the
 * probe is a run of a VM, and accel.c then needs nothing of this file. */
static char *
kvm_probe_boot (AirlockConnection *conn, gpointer data)
{
  const AirlockVm *parent = data;
  AirlockVmOptions o = parent->opts;
  g_autoptr (AirlockVm) vm = NULL;
  g_autoptr (GError) error = NULL;

  o.boot_timeout_ms = KVM_PROBE_TIMEOUT_MS;
  o.guest_run_ms = 1;
  o.run_timeout_ms = KVM_PROBE_TIMEOUT_MS;
  o.test_mode = NULL;
  o.spec = NULL;          /* the probe is a boot check, whatever the run asks */
  o.clock_warp = FALSE;
  vm = vm_new_on (parent->arch, parent->image, &o, conn, "kvm");
  if (!airlock_vm_run (vm, &error))
    return g_strdup (error->message);
  if (!airlock_vm_is_complete (vm))
    return g_strdup_printf ("probe boot failed: %s", airlock_vm_get_reason (vm));
  return NULL;
}

AirlockVm *
airlock_vm_new (AirlockArch arch, const AirlockGuestImage *image, const AirlockVmOptions *options,
                GError **error)
{
  g_autoptr (AirlockVm) vm = NULL;

  g_return_val_if_fail ((unsigned) arch < AIRLOCK_N_ARCHES, NULL);
  g_return_val_if_fail (image != NULL && image->arch == arch, NULL);

  vm = vm_alloc (arch, image, options);
  vm->conn = airlock_connection_open (vm->opts.uri, vm->cache_dir, vm->swept, error);
  if (!vm->conn)
    return NULL;
  /* Encoded before anything is booted: a spec the guest would refuse fails
   * here, with the field named, not as an inconclusive run. */
  if (options && options->spec)
    {
      AirlockRunSpec spec = *options->spec;

      /* The guest's half of the warped clock: its limit is guest time, its
       * heartbeats answer our ticks, our stop ends the workload. */
      spec.warp = vm->opts.clock_warp;
      /* A remote QEMU cannot reach the sinkhole's socket: the guest's
       * network travels on a channel instead of a NIC (domain.c). */
      vm->net_port = vm->conn->remote && !vm->opts.no_network;
      spec.net_port = vm->net_port;
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
  if (!airlock_accel_resolve (vm->conn, arch, vm->opts.accel, &vm->opts, kvm_probe_boot, vm,
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

  if (!airlock_vm_prepare_run_dir (vm, error) || !airlock_vm_start_domain (vm, error)
      || !airlock_vm_open_streams (vm, error))
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
               && !airlock_vm_connection_lost (vm))
        /* The channel closed under us: QEMU died or the guest stopped.  Let
         * libvirt notice first, so its stop event says which, instead of
         * our destroy.  (A dead connection delivers no event.) */
        airlock_vm_wait_for_stop_event (vm, 2000);
      g_mutex_unlock (&vm->lock);
    }
  else
    airlock_channel_fail (vm->channel, AIRLOCK_ANOMALY_EXTERNAL,
                          error && *error ? (*error)->message : "the VM did not start");

  airlock_vm_teardown (vm);

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
