/* One seccomp notification: find out who made which call with what, write
 * the record to the evidence channel, then answer.
 *
 * Write-ahead: the record is on its way to the host (channel_send returned)
 * before the call proceeds, is denied, or is performed.
 *
 * Three answers (enum airlock_event_action):
 *   CONTINUE  the kernel runs the call as the workload made it.  Used where
 *             the bytes we read cannot change what leaves the machine:
 *             sockets that are not inet, sends without an address (the
 *             destination was fixed, and recorded, by an earlier connect),
 *             bind/listen/accept, execve;
 *   EMULATE   the supervisor makes the call itself, on its own duplicate of
 *             the workload's socket (pidfd_getfd), with the bytes it
 *             recorded: connect, and sends that carry an inet destination.
 *             Another thread rewriting the sockaddr after we read it
 *             changes nothing: the copy we recorded is the copy used.  A
 *             RESULT event follows with what the call returned;
 *   DENY      the workload gets an errno (see enum airlock_deny_reason).
 *
 * Calls on blocking sockets that can block (connect, a send) run in a
 * worker thread, so the loop keeps answering other threads meanwhile.
 *
 * This file: the notifier and the loop's step (notifier_handle_one():
 * receive, dispatch by system call).  Its parts (notify.h): answer.c (the
 * answers and the records' frames), caller.c (who calls, its memory, its
 * socket), calls.c (a handler per call) and emulate.c (the calls the
 * supervisor performs). */
#define _GNU_SOURCE

#include <errno.h>
#include <linux/audit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "notify.h"

struct notifier *
notifier_new (int listener)
{
  struct notifier *n = calloc (1, sizeof *n);

  if (!n)
    return NULL;
  n->listener = listener;
  pthread_mutex_init (&n->lock, NULL);
  pthread_cond_init (&n->idle, NULL);
  return n;
}

void
notifier_free (struct notifier *n)
{
  unsigned busy;

  if (!n)
    return;
  pthread_mutex_lock (&n->lock);
  busy = n->workers;
  pthread_mutex_unlock (&n->lock);
  if (busy > 0)
    return;   /* a worker notifier_finish() gave up on still holds it: keep it */
  pthread_mutex_destroy (&n->lock);
  pthread_cond_destroy (&n->idle);
  free (n);
}

uint64_t
notifier_count (struct notifier *n)
{
  return n->count;
}

int
notifier_handle_one (struct notifier *n)
{
  struct seccomp_notif req;
  struct call c;
  long nr;

  memset (&req, 0, sizeof req);
  if (ioctl (n->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    {
      /* ENOENT: the caller was killed between the wake-up and the receive. */
      if (errno == EINTR || errno == ENOENT)
        return 0;
      return -errno;
    }
  n->count++;
  memset (&c, 0, sizeof c);
  c.n = n;
  c.req = &req;
  nr = req.data.nr;

  if (req.data.arch != filter_native_arch ())
    {
      read_proc_info ((pid_t) req.pid, &c.pi);
      deny (&c, AIRLOCK_DENY_FOREIGN_ABI, ENOSYS);
      return 0;
    }
#ifdef __x86_64__
  if (nr & 0x40000000)
    {
      read_proc_info ((pid_t) req.pid, &c.pi);
      deny (&c, AIRLOCK_DENY_X32, ENOSYS);
      return 0;
    }
#endif
  if (nr == SYS_write || nr == SYS_writev || nr == SYS_sendfile || nr == SYS_splice)
    {
      handle_write (&c, nr == SYS_writev ? WRITE_WRITEV : nr == SYS_sendfile ? WRITE_SENDFILE
                        : nr == SYS_splice ? WRITE_SPLICE : WRITE_WRITE);
      return 0;
    }

  read_proc_info ((pid_t) req.pid, &c.pi);
  switch (nr)
    {
    case SYS_socket:
      handle_socket (&c);
      break;
    case SYS_socketpair:
      handle_socketpair (&c);
      break;
    case SYS_connect:
      clock_hold_after_network ();
      handle_connect_bind (&c, true);
      break;
    case SYS_bind:
      handle_connect_bind (&c, false);
      break;
    case SYS_listen:
#ifdef SYS_accept
    case SYS_accept:
#endif
    case SYS_accept4:
      handle_fd_call (&c);
      break;
    case SYS_sendto:
      clock_hold_after_network ();
      handle_sendto (&c);
      break;
    case SYS_sendmsg:
      clock_hold_after_network ();
      handle_sendmsg (&c);
      break;
    case SYS_sendmmsg:
      clock_hold_after_network ();
      handle_sendmmsg (&c);
      break;
    case SYS_execve:
      handle_exec (&c, false);
      break;
    case SYS_execveat:
      handle_exec (&c, true);
      break;
    case SYS_clone:
      deny (&c, AIRLOCK_DENY_CLONE_UNTRACED, EPERM);
      break;
    case SYS_clone3:
      handle_clone3 (&c);
      break;
    case SYS_seccomp:
      deny (&c, AIRLOCK_DENY_SECCOMP_LISTENER, EPERM);
      break;
    case SYS_ptrace:
      deny (&c, AIRLOCK_DENY_PTRACE, EPERM);
      break;
    case SYS_process_vm_writev:
      deny (&c, AIRLOCK_DENY_PROCESS_VM_WRITEV, EPERM);
      break;
    case SYS_io_uring_setup:
    case SYS_io_uring_enter:
    case SYS_io_uring_register:
      deny (&c, AIRLOCK_DENY_IO_URING, ENOSYS);
      break;
    case SYS_keyctl:
    case SYS_add_key:
    case SYS_request_key:
      deny (&c, AIRLOCK_DENY_KEYRING, EPERM);
      break;
    case SYS_bpf:
      deny (&c, AIRLOCK_DENY_BPF, EPERM);
      break;
    default:
      /* The rest of the filter's list: module loading, kexec, port I/O,
       * perf_event_open, userfaultfd. */
      deny (&c, AIRLOCK_DENY_KERNEL, EPERM);
      break;
    }
  return 0;
}
