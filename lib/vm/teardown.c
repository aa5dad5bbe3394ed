/* The end of a run: QEMU killed first (embedded; reaped when it is our
 * child), or the domain destroyed; a daemon that went away under the run
 * reconnected to, to destroy the domain there; the readers and senders
 * ended in the order libvirt needs (the stop event awaited, the domain gone
 * before a stream is aborted); the sinkhole's records and the capture
 * read; the run's directories removed. */
#include "config.h"

#include "vm/teardown-private.h"

#include "bounds-private.h"
#include "fsutil-private.h"
#include "vm/streams-private.h"

#include <sys/socket.h>

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

/* Called with vm->lock held. */
void
airlock_vm_wait_for_stop_event (AirlockVm *vm, guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (!vm->domain_stopped)
    if (!g_cond_wait_until (&vm->cond, &vm->lock, deadline))
      break;
}

/* How long a run whose daemon went away waits for it to come back, to
 * destroy its domain there. */
#define RECONNECT_MS 15000

gboolean
airlock_vm_connection_lost (AirlockVm *vm)
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

void
airlock_vm_teardown (AirlockVm *vm)
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
      if (airlock_vm_connection_lost (vm))
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
  airlock_vm_clock_ticker_stop (vm);
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
      airlock_vm_wait_for_stop_event (vm, 2000);
      g_mutex_unlock (&vm->lock);
      (void) virConnectDomainEventDeregisterAny (vm->conn->conn, vm->lifecycle_cb);
    }
  vm->lifecycle_cb = -1;
  if ((vm->evidence_ep.stream || vm->console_ep.stream || vm->stdio_ep.stream
       || vm->net_ep.stream) && uuid[0])
    wait_domain_gone (vm, uuid);
  airlock_vm_endpoint_close (&vm->evidence_ep);
  airlock_vm_endpoint_close (&vm->console_ep);
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
  airlock_vm_endpoint_close (&vm->stdio_ep);
  g_mutex_unlock (&vm->stdio_send_lock);
  if (vm->stdio_thread)
    g_thread_join (g_steal_pointer (&vm->stdio_thread));
  airlock_vm_net_port_close (vm);
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
