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
 * worker thread, so the loop keeps answering other threads meanwhile. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "msg.h"
#include "record.h"
#include "supervisor.h"

#define PAYLOAD_MAX RECORD_PAYLOAD_MAX
/* UDP refuses more than 64 KiB in one datagram (udp_sendmsg); a TCP Fast
 * Open send is cut here (a short send is legal on a stream). */
#define EMULATE_DATA_MAX 65536
/* All entries of one emulated sendmmsg together. */
#define EMULATE_MMSG_MAX (4u * 1024 * 1024)
#define MAX_WORKERS 64
#define CLONE3_SEEN_MAX 256

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

struct job;

struct notifier {
  int listener;
  uint64_t count;
  pthread_mutex_t lock;
  pthread_cond_t idle;
  struct job *active;      /* jobs running in workers */
  unsigned workers;
  pid_t clone3_seen[CLONE3_SEEN_MAX];
  size_t n_clone3_seen;
};

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

/* ---- answers -------------------------------------------------------------- */

static void
respond (struct notifier *n, uint64_t id, int64_t val, int error, bool cont)
{
  struct seccomp_notif_resp resp = {
    .id = id,
    .val = val,
    .error = error,
    .flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0,
  };

  /* ENOENT: the caller died (or was killed) meanwhile; nothing to answer. */
  if (ioctl (n->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
    console_log ("cannot answer notification %llu: %s", (unsigned long long) id, strerror (errno));
}

/* ---- who is calling --------------------------------------------------------- */

static ssize_t
read_prefix (const char *path, char *buf, size_t size)
{
  size_t got = 0;
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  while (got < size)
    {
      ssize_t r = read (fd, buf + got, size - got);

      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += (size_t) r;
    }
  close (fd);
  return (ssize_t) got;
}

static uint32_t
status_field (const char *status, const char *key, bool last)
{
  const char *p = strstr (status, key);
  unsigned long v = 0;

  if (!p)
    return 0;
  p += strlen (key);
  for (;;)
    {
      char *end;

      while (*p == ' ' || *p == '\t')
        p++;
      if (*p < '0' || *p > '9')
        break;
      v = strtoul (p, &end, 10);
      p = end;
      if (!last)
        break;
    }
  return (uint32_t) v;
}

static void
read_proc_info (pid_t tid, struct proc_info *pi)
{
  char path[64], status[4096];
  ssize_t r;

  memset (pi, 0, sizeof *pi);
  snprintf (path, sizeof path, "/proc/%d/status", tid);
  r = read_prefix (path, status, sizeof status - 1);
  if (r <= 0)
    return;
  status[r] = '\0';
  pi->tgid = status_field (status, "\nTgid:", false);
  pi->ppid = status_field (status, "\nPPid:", false);
  pi->uid = status_field (status, "\nUid:", false);
  pi->gid = status_field (status, "\nGid:", false);
  pi->nspid = status_field (status, "\nNSpid:", true);
  snprintf (path, sizeof path, "/proc/%d/exe", tid);
  r = readlink (path, pi->exe, sizeof pi->exe);
  pi->exe_len = r > 0 ? (size_t) r : 0;
  snprintf (path, sizeof path, "/proc/%d/cmdline", tid);
  r = read_prefix (path, pi->argv, sizeof pi->argv);
  pi->argv_len = r > 0 ? (size_t) r : 0;
  pi->ok = pi->tgid != 0;
}

/* ---- the caller's memory ---------------------------------------------------- */

static ssize_t
mem_read_cb (void *ctx, uint64_t addr, void *buf, size_t len)
{
  pid_t tid = (pid_t) (intptr_t) ctx;
  struct iovec local = { .iov_base = buf, .iov_len = len };
  struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = len };
  ssize_t r = process_vm_readv (tid, &local, 1, &remote, 1, 0);

  return r < 0 ? -errno : r;
}

static struct msg_mem
mem_of (pid_t tid)
{
  return (struct msg_mem) { .read = mem_read_cb, .ctx = (void *) (intptr_t) tid };
}

/* Reads a NUL-terminated string of at most @size - 1 bytes, page by page
 * (a string may end right before an unmapped page).  Returns its length or
 * -EFAULT. */
static ssize_t
mem_read_string (pid_t tid, uint64_t addr, char *buf, size_t size)
{
  size_t got = 0;

  while (got < size - 1)
    {
      size_t chunk = 4096 - ((addr + got) & 4095);
      ssize_t r;
      char *nul;

      if (chunk > size - 1 - got)
        chunk = size - 1 - got;
      r = mem_read_cb ((void *) (intptr_t) tid, addr + got, buf + got, chunk);
      if (r <= 0)
        {
          if (got == 0)
            return -EFAULT;
          buf[got] = '\0';
          return (ssize_t) got;
        }
      nul = memchr (buf + got, '\0', (size_t) r);
      if (nul)
        return nul - buf;
      got += (size_t) r;
    }
  buf[got] = '\0';
  return (ssize_t) got;
}

/* The argv array of an execve: NUL-separated strings, at most @size bytes. */
static size_t
mem_read_argv (pid_t tid, uint64_t argv_addr, char *buf, size_t size)
{
  struct msg_mem m = mem_of (tid);
  size_t len = 0;

  for (unsigned i = 0; argv_addr && i < 1024 && len < size; i++)
    {
      uint64_t p;
      ssize_t r;

      if (msg_read_exact (&m, argv_addr + 8ull * i, &p, 8) < 0 || p == 0)
        break;
      r = mem_read_string (tid, p, buf + len, size - len);
      if (r < 0)
        break;
      len += (size_t) r + 1 <= size - len ? (size_t) r + 1 : size - len;
    }
  return len;
}

/* ---- the socket a call names -------------------------------------------------- */

static void
sock_info_get (uint32_t tgid, int target_fd, struct sock_info *si)
{
  socklen_t len;
  struct stat st;
  int pidfd, fl;

  memset (si, 0, sizeof *si);
  si->fd = -1;
  pidfd = (int) syscall (SYS_pidfd_open, tgid, 0);
  if (pidfd < 0)
    {
      si->dup_errno = errno;
      return;
    }
  si->fd = (int) syscall (SYS_pidfd_getfd, pidfd, target_fd, 0);
  si->dup_errno = si->fd < 0 ? errno : 0;
  close (pidfd);
  if (si->fd < 0)
    return;
  if (fstat (si->fd, &st) == 0)
    si->ino = (uint64_t) st.st_ino;
  if (!S_ISSOCK (st.st_mode))
    return;
  si->is_socket = true;
  len = sizeof si->family;
  getsockopt (si->fd, SOL_SOCKET, SO_DOMAIN, &si->family, &len);
  len = sizeof si->type;
  getsockopt (si->fd, SOL_SOCKET, SO_TYPE, &si->type, &len);
  len = sizeof si->protocol;
  getsockopt (si->fd, SOL_SOCKET, SO_PROTOCOL, &si->protocol, &len);
  fl = fcntl (si->fd, F_GETFL);
  si->nonblock = fl >= 0 && (fl & O_NONBLOCK);
  si->peer_len = sizeof si->peer;
  if (getpeername (si->fd, (struct sockaddr *) si->peer, &si->peer_len) < 0)
    si->peer_len = 0;
  si->local_len = sizeof si->local;
  if (getsockname (si->fd, (struct sockaddr *) si->local, &si->local_len) < 0)
    si->local_len = 0;
  if (si->peer_len > sizeof si->peer)
    si->peer_len = sizeof si->peer;
  if (si->local_len > sizeof si->local)
    si->local_len = sizeof si->local;
}

static void
sock_info_clear (struct sock_info *si)
{
  if (si->fd >= 0)
    close (si->fd);
  si->fd = -1;
}

static bool
is_inet (const struct sock_info *si)
{
  return si->is_socket && (si->family == AF_INET || si->family == AF_INET6);
}

/* ---- records -------------------------------------------------------------------- */

/* Sends one frame (a record's, a RESULT); a failure is the channel's,
 * which the host sees as the end of the stream. */
static int
rec_send_frame (struct wire_frame *f, uint64_t *ret_seq)
{
  int r = channel_send (f, ret_seq);

  if (r < 0)
    console_log ("cannot send a record: %s", strerror (-r));
  return r;
}

static void
send_result (uint64_t ref, int64_t result)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u64 (&f, AIRLOCK_TLV_EV_REF, ref);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT, (uint64_t) result);
  rec_send_frame (&f, NULL);
}

/* An emulated call that ends before it is made: its RESULT, then the
 * workload's errno. */
static void
fail_emulated (struct notifier *n, uint64_t id, uint64_t ref, int err)
{
  send_result (ref, err);
  respond (n, id, 0, err, false);
}

/* The notification is still the one we read about: the caller has not died
 * and its pid been reused while we looked at /proc and its memory. */
static bool
still_valid (struct notifier *n, uint64_t id)
{
  return ioctl (n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* ---- calls the supervisor performs ---------------------------------------------- */

enum job_op { JOB_CONNECT, JOB_SENDTO, JOB_SENDMSG, JOB_SENDMMSG };

struct job {
  struct notifier *n;
  struct job *next;
  enum job_op op;
  uint64_t id;             /* the notification to answer */
  uint64_t ref;            /* seq of the (first) record */
  pid_t tid;               /* the caller, for sendmmsg's msg_len write-back */
  int fd;                  /* our duplicate of its socket */
  int flags;
  uint8_t addr[MSG_SOCKADDR_MAX];
  socklen_t addr_len;
  uint8_t *data;
  size_t data_len;
  struct msghdr msg;       /* JOB_SENDMSG */
  struct iovec iov;
  struct msg_copy *copies; /* JOB_SENDMMSG: n_copies entries */
  struct mmsghdr *vec;
  struct iovec *iovs;
  unsigned n_copies;
  uint64_t vec_addr;
};

static void
job_free (struct job *j)
{
  if (j->fd >= 0)
    close (j->fd);
  free (j->data);
  free (j->msg.msg_control);
  if (j->copies)
    for (unsigned i = 0; i < j->n_copies; i++)
      msg_copy_clear (&j->copies[i]);
  free (j->copies);
  free (j->vec);
  free (j->iovs);
  free (j);
}

static int64_t
job_perform (struct job *j)
{
  ssize_t r = -1;

  switch (j->op)
    {
    case JOB_CONNECT:
      r = connect (j->fd, (struct sockaddr *) j->addr, j->addr_len);
      break;
    case JOB_SENDTO:
      r = sendto (j->fd, j->data, j->data_len, j->flags | MSG_NOSIGNAL,
                  (struct sockaddr *) j->addr, j->addr_len);
      break;
    case JOB_SENDMSG:
      r = sendmsg (j->fd, &j->msg, j->flags | MSG_NOSIGNAL);
      break;
    case JOB_SENDMMSG:
      r = sendmmsg (j->fd, j->vec, j->n_copies, j->flags | MSG_NOSIGNAL);
      if (r > 0)
        for (int i = 0; i < r; i++)
          {
            /* sendmmsg reports each entry's length in the caller's array. */
            uint32_t len = j->vec[i].msg_len;
            struct iovec local = { .iov_base = &len, .iov_len = sizeof len };
            struct iovec remote = {
              .iov_base = (void *) (uintptr_t) (j->vec_addr + (uint64_t) i * MSG_MMSGHDR_SIZE
                                                + MSG_MMSG_LEN_OFFSET),
              .iov_len = sizeof len,
            };
            process_vm_writev (j->tid, &local, 1, &remote, 1, 0);
          }
      break;
    }
  return r < 0 ? -errno : r;
}

/* Performs the call, reports its result, answers.  MSG_NOSIGNAL: a send on
 * a broken stream must not kill PID 1 with SIGPIPE (the workload's own
 * SIGPIPE is lost, its send still returns EPIPE). */
static void
job_finish (struct job *j)
{
  int64_t r = job_perform (j);

  send_result (j->ref, r);
  if (r < 0)
    respond (j->n, j->id, 0, (int) r, false);
  else
    respond (j->n, j->id, r, 0, false);
}

static void *
worker_main (void *data)
{
  struct job *j = data;
  struct notifier *n = j->n;

  job_finish (j);
  pthread_mutex_lock (&n->lock);
  for (struct job **p = &n->active; *p; p = &(*p)->next)
    if (*p == j)
      {
        *p = j->next;
        break;
      }
  n->workers--;
  pthread_cond_broadcast (&n->idle);
  pthread_mutex_unlock (&n->lock);
  job_free (j);
  return NULL;
}

/* Runs @j now when it cannot block, in a worker when it can.  Takes it.
 * Inline sends carry MSG_DONTWAIT, so a workload that clears O_NONBLOCK
 * after we looked still cannot make this thread wait.  Without a worker to
 * spare (MAX_WORKERS busy) the call runs here and may block this loop;
 * heartbeats go on in their own thread. */
static void
job_start (struct notifier *n, struct job *j, bool can_block)
{
  pthread_t t;
  pthread_attr_t attr;

  j->n = n;
  if (can_block)
    {
      pthread_mutex_lock (&n->lock);
      if (n->workers < MAX_WORKERS)
        {
          j->next = n->active;
          n->active = j;
          n->workers++;
          pthread_mutex_unlock (&n->lock);
          pthread_attr_init (&attr);
          pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
          pthread_attr_setstacksize (&attr, 64 * 1024);
          if (pthread_create (&t, &attr, worker_main, j) == 0)
            {
              pthread_attr_destroy (&attr);
              return;
            }
          pthread_attr_destroy (&attr);
          pthread_mutex_lock (&n->lock);
          n->active = j->next;
          n->workers--;
        }
      pthread_mutex_unlock (&n->lock);
      /* No worker to spare: block here (heartbeats go on in their thread). */
    }
  else if (j->op != JOB_CONNECT)
    j->flags |= MSG_DONTWAIT;
  job_finish (j);
  job_free (j);
}

void
notifier_finish (struct notifier *n)
{
  struct timespec ts;

  pthread_mutex_lock (&n->lock);
  /* Whatever the workers wait for (a connect, a full send buffer) ends
   * when their socket is shut down: the workload is gone anyway. */
  for (struct job *j = n->active; j; j = j->next)
    shutdown (j->fd, SHUT_RDWR);
  clock_gettime (CLOCK_REALTIME, &ts);
  ts.tv_sec += 5;
  while (n->workers > 0)
    if (pthread_cond_timedwait (&n->idle, &n->lock, &ts) != 0)
      break;
  if (n->workers > 0)
    console_log ("%u worker(s) still busy at the end of the run", n->workers);
  pthread_mutex_unlock (&n->lock);
}

static struct job *
job_new (enum job_op op, const struct seccomp_notif *req, struct sock_info *si)
{
  struct job *j = calloc (1, sizeof *j);

  if (!j)
    return NULL;
  j->op = op;
  j->id = req->id;
  j->tid = (pid_t) req->pid;
  j->fd = si->fd;      /* the job owns our duplicate now */
  si->fd = -1;
  return j;
}

/* ---- handlers ---------------------------------------------------------------------- */

struct call {
  struct notifier *n;
  const struct seccomp_notif *req;
  struct proc_info pi;
};

/* Starts the record of @c's call, answered with @action. */
static void
rec_start (struct record *rec, const struct call *c, uint32_t action)
{
  record_begin (rec, &c->req->data, c->req->pid, clock_ns (CLOCK_BOOTTIME), action);
}

/* Sends a record built by a record_*() builder: always one well-formed
 * frame (record.h). */
static int
rec_send (struct record *rec, uint64_t *ret_seq)
{
  record_end (rec);
  return rec_send_frame (&rec->f, ret_seq);
}

static void
deny (struct call *c, uint32_t reason, int err)
{
  struct record rec;

  rec_start (&rec, c, AIRLOCK_ACTION_DENY);
  record_deny (&rec, reason, &c->pi,
               c->req->data.nr == SYS_socket && c->req->data.arch == filter_native_arch ());
  rec_send (&rec, NULL);
  respond (c->n, c->req->id, 0, -err, false);
}

/* Which sockets a workload may create; see enum airlock_deny_reason. */
static void
handle_socket (struct call *c)
{
  int family = (int) c->req->data.args[0];
  int type = (int) c->req->data.args[1] & 0xf;
  int proto = (int) c->req->data.args[2];
  struct record rec;

  switch (family)
    {
    case AF_UNIX:
    case AF_NETLINK:
      break;
    case AF_INET:
    case AF_INET6:
      if (type == SOCK_RAW)
        return deny (c, AIRLOCK_DENY_RAW_SOCKET, EPERM);
      if (type == SOCK_PACKET)
        return deny (c, AIRLOCK_DENY_PACKET_SOCKET, EPERM);
      if (proto == IPPROTO_SCTP || type == SOCK_SEQPACKET)
        return deny (c, AIRLOCK_DENY_SCTP, EPROTONOSUPPORT);
      if (type == SOCK_STREAM && (proto == 0 || proto == IPPROTO_TCP || proto == IPPROTO_MPTCP))
        break;
      if (type == SOCK_DGRAM
          && (proto == 0 || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE
              || (family == AF_INET && proto == IPPROTO_ICMP)
              || (family == AF_INET6 && proto == IPPROTO_ICMPV6)))
        break;
      return deny (c, AIRLOCK_DENY_SOCKET_FAMILY, EPROTONOSUPPORT);
    case AF_PACKET:
      return deny (c, AIRLOCK_DENY_PACKET_SOCKET, EPERM);
    case AF_VSOCK:
      return deny (c, AIRLOCK_DENY_VSOCK, EAFNOSUPPORT);
    default:
      return deny (c, AIRLOCK_DENY_SOCKET_FAMILY, EAFNOSUPPORT);
    }
  rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
  record_socket_call (&rec, &c->pi, (uint32_t) family, (uint32_t) type, (uint32_t) proto);
  rec_send (&rec, NULL);
  respond (c->n, c->req->id, 0, 0, true);
}

static void
handle_socketpair (struct call *c)
{
  struct record rec;

  rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
  record_socket_call (&rec, &c->pi, (uint32_t) c->req->data.args[0],
                      (uint32_t) c->req->data.args[1] & 0xf, (uint32_t) c->req->data.args[2]);
  rec_send (&rec, NULL);
  respond (c->n, c->req->id, 0, 0, true);
}

/* connect(fd, addr, addrlen) and bind: bind is recorded and continued
 * (the address is local: nothing leaves through it). */
static void
handle_connect_bind (struct call *c, bool is_connect)
{
  const struct seccomp_notif *req = c->req;
  int fd = (int) req->data.args[0];
  uint64_t addr = req->data.args[1];
  int32_t addrlen = (int32_t) req->data.args[2];
  struct msg_mem m = mem_of ((pid_t) req->pid);
  uint8_t sa[MSG_SOCKADDR_MAX];
  size_t sa_len = 0;
  struct sock_info si;
  struct record rec;
  bool emulate, readable = true;
  uint64_t seq;
  struct job *j;

  sock_info_get (c->pi.tgid ? c->pi.tgid : req->pid, fd, &si);
  /* net/socket.c move_addr_to_kernel: a length below 0 or above 128 is
   * EINVAL before any byte is read, so continuing such a call is safe. */
  if (addrlen >= 0 && addrlen <= MSG_SOCKADDR_MAX)
    {
      sa_len = (size_t) addrlen;
      readable = msg_read_exact (&m, addr, sa, sa_len) == 0;
    }
  emulate = is_connect && is_inet (&si) && addrlen >= 0 && addrlen <= MSG_SOCKADDR_MAX;
  if (!still_valid (c->n, req->id))
    goto out;

  rec_start (&rec, c, emulate ? AIRLOCK_ACTION_EMULATE : AIRLOCK_ACTION_CONTINUE);
  record_connect_bind (&rec, &c->pi, fd, &si, addrlen, sa, sa_len, readable);
  if (rec_send (&rec, &seq) < 0)
    goto out;

  if (!emulate)
    {
      respond (c->n, req->id, 0, 0, true);
      goto out;
    }
  if (!readable)
    {
      fail_emulated (c->n, req->id, seq, -EFAULT);
      goto out;
    }
  j = job_new (JOB_CONNECT, req, &si);
  if (!j)
    {
      fail_emulated (c->n, req->id, seq, -ENOMEM);
      goto out;
    }
  j->ref = seq;
  memcpy (j->addr, sa, sa_len);
  j->addr_len = (socklen_t) sa_len;
  /* Always a worker: connect has no per-call "don't wait" flag, and the
   * workload could clear O_NONBLOCK right after we looked. */
  job_start (c->n, j, true);
out:
  sock_info_clear (&si);
}

static void
handle_fd_call (struct call *c)
{
  int fd = (int) c->req->data.args[0];
  struct sock_info si;
  struct record rec;

  sock_info_get (c->pi.tgid ? c->pi.tgid : c->req->pid, fd, &si);
  if (still_valid (c->n, c->req->id))
    {
      rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
      record_fd_call (&rec, &c->pi, fd, &si);
      rec_send (&rec, NULL);
      respond (c->n, c->req->id, 0, 0, true);
    }
  sock_info_clear (&si);
}

/* sendto(fd, buf, len, flags, addr, addrlen); send() is sendto with no
 * address on both arches. */
static void
handle_sendto (struct call *c)
{
  const struct seccomp_notif *req = c->req;
  int fd = (int) req->data.args[0];
  uint64_t buf = req->data.args[1];
  uint64_t len = req->data.args[2];
  int flags = (int) req->data.args[3];
  uint64_t addr = req->data.args[4];
  int32_t addrlen = (int32_t) req->data.args[5];
  struct msg_mem m = mem_of ((pid_t) req->pid);
  uint8_t sa[MSG_SOCKADDR_MAX];
  size_t sa_len = 0, data_len, want;
  uint8_t *data = NULL;
  struct sock_info si;
  struct record rec;
  bool emulate, sa_ok = true, data_ok;
  int err = 0;
  uint64_t seq;
  struct job *j;

  sock_info_get (c->pi.tgid ? c->pi.tgid : req->pid, fd, &si);
  if (addr != 0 && addrlen >= 0 && addrlen <= MSG_SOCKADDR_MAX)
    {
      sa_len = (size_t) addrlen;
      sa_ok = msg_read_exact (&m, addr, sa, sa_len) == 0;
    }
  emulate = addr != 0 && addrlen >= 0 && addrlen <= MSG_SOCKADDR_MAX && is_inet (&si)
            && record_send_uses_address (&si, flags);
  if (len > MSG_MAX_RW_COUNT)
    len = MSG_MAX_RW_COUNT;
  want = emulate ? (len < EMULATE_DATA_MAX ? (size_t) len : EMULATE_DATA_MAX)
                 : (len < PAYLOAD_MAX ? (size_t) len : PAYLOAD_MAX);
  data = want ? malloc (want) : NULL;
  data_len = want;
  data_ok = want == 0 || (data && msg_read_exact (&m, buf, data, want) == 0);
  if (emulate && si.type == SOCK_DGRAM && len > 0xffff)
    err = -EMSGSIZE;   /* udp_sendmsg / udpv6_sendmsg */
  else if (emulate && (!sa_ok || !data_ok))
    err = -EFAULT;
  if (!still_valid (c->n, req->id))
    goto out;

  rec_start (&rec, c, emulate ? AIRLOCK_ACTION_EMULATE : AIRLOCK_ACTION_CONTINUE);
  record_sendto (&rec, &c->pi, fd, &si, flags, addr, addrlen, sa, sa_len, sa_ok, data, data_len,
                 data_ok, len);
  if (rec_send (&rec, &seq) < 0)
    goto out;

  if (!emulate)
    {
      respond (c->n, req->id, 0, 0, true);
      goto out;
    }
  if (err < 0)
    {
      fail_emulated (c->n, req->id, seq, err);
      goto out;
    }
  j = job_new (JOB_SENDTO, req, &si);
  if (!j)
    {
      fail_emulated (c->n, req->id, seq, -ENOMEM);
      goto out;
    }
  j->ref = seq;
  j->flags = flags;
  memcpy (j->addr, sa, sa_len);
  j->addr_len = (socklen_t) sa_len;
  j->data = data;
  j->data_len = data_len;
  data = NULL;
  job_start (c->n, j, !si.nonblock && !(flags & MSG_DONTWAIT));
out:
  free (data);
  sock_info_clear (&si);
}

/* One record for one message (sendmsg, or an entry of sendmmsg). */
static int
rec_message (const struct call *c, const struct sock_info *si, int fd, int flags, uint32_t action,
             const struct msg_copy *mc, int copy_err, uint32_t index, uint32_t count,
             bool indexed, uint64_t *ret_seq)
{
  struct record rec;

  rec_start (&rec, c, action);
  record_message (&rec, &c->pi, fd, si, flags, mc, copy_err, index, count, indexed);
  return rec_send (&rec, ret_seq);
}

static void
handle_sendmsg (struct call *c)
{
  const struct seccomp_notif *req = c->req;
  int fd = (int) req->data.args[0];
  uint64_t msg_addr = req->data.args[1];
  int flags = (int) req->data.args[2];
  struct msg_mem m = mem_of ((pid_t) req->pid);
  struct msg_copy mc;
  struct sock_info si;
  bool emulate;
  int err;
  uint64_t seq;
  struct job *j;

  sock_info_get (c->pi.tgid ? c->pi.tgid : req->pid, fd, &si);
  /* Read once with the small cap to see whether the message is named. */
  err = msg_copy_read (&m, msg_addr, EMULATE_DATA_MAX, true, &mc);
  emulate = is_inet (&si) && record_send_uses_address (&si, flags)
            && (mc.named || err == -EFAULT);
  if (emulate && err == 0 && si.type == SOCK_DGRAM && mc.data.total > 0xffff)
    err = -EMSGSIZE;
  if (!still_valid (c->n, req->id))
    goto out;
  if (rec_message (c, &si, fd, flags, emulate ? AIRLOCK_ACTION_EMULATE : AIRLOCK_ACTION_CONTINUE,
                   &mc, err, 0, 0, false, &seq) < 0)
    goto out;
  if (!emulate)
    {
      respond (c->n, req->id, 0, 0, true);
      goto out;
    }
  if (err < 0)
    {
      fail_emulated (c->n, req->id, seq, err);
      goto out;
    }
  j = job_new (JOB_SENDMSG, req, &si);
  if (!j)
    {
      fail_emulated (c->n, req->id, seq, -ENOMEM);
      goto out;
    }
  j->ref = seq;
  j->flags = flags;
  memcpy (j->addr, mc.name, mc.name_len);
  j->addr_len = (socklen_t) mc.name_len;
  j->data = mc.data.bytes;
  j->data_len = mc.data.len;
  mc.data.bytes = NULL;
  j->iov.iov_base = j->data;
  j->iov.iov_len = j->data_len;
  j->msg.msg_name = j->addr;
  j->msg.msg_namelen = j->addr_len;
  j->msg.msg_iov = &j->iov;
  j->msg.msg_iovlen = 1;
  j->msg.msg_control = mc.control;
  j->msg.msg_controllen = (size_t) mc.controllen;
  mc.control = NULL;
  job_start (c->n, j, !si.nonblock && !(flags & MSG_DONTWAIT));
out:
  msg_copy_clear (&mc);
  sock_info_clear (&si);
}

static void
handle_sendmmsg (struct call *c)
{
  const struct seccomp_notif *req = c->req;
  int fd = (int) req->data.args[0];
  uint64_t vec_addr = req->data.args[1];
  unsigned vlen = (unsigned) req->data.args[2];
  int flags = (int) req->data.args[3];
  struct msg_mem m = mem_of ((pid_t) req->pid);
  struct msg_copy *copies;
  int *errs;
  struct sock_info si;
  bool emulate = false;
  unsigned n_read = 0;
  size_t total = 0;
  uint64_t first_seq = 0;
  struct job *j;

  if (vlen > MSG_UIO_MAXIOV)
    vlen = MSG_UIO_MAXIOV;   /* net/socket.c __sys_sendmmsg */
  sock_info_get (c->pi.tgid ? c->pi.tgid : req->pid, fd, &si);
  /* A descriptor that is not open, or no socket: the kernel fails the call
   * (EBADF, ENOTSOCK) before it reads the vector, so none of its entries
   * exist.  One record of the call, not up to 1024 records of messages
   * nobody sends. */
  if (!si.is_socket && (si.fd >= 0 || si.dup_errno == EBADF))
    {
      if (still_valid (c->n, req->id))
        {
          struct record rec;

          rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
          record_mmsg_empty (&rec, &c->pi, fd, &si);
          record_note (&rec, "vector not read: the kernel refuses the descriptor first");
          rec_send (&rec, NULL);
          respond (c->n, req->id, 0, 0, true);
        }
      sock_info_clear (&si);
      return;
    }
  copies = calloc (vlen ? vlen : 1, sizeof *copies);
  errs = calloc (vlen ? vlen : 1, sizeof *errs);
  if (!copies || !errs)
    {
      free (copies);
      free (errs);
      respond (c->n, req->id, 0, -ENOMEM, false);
      sock_info_clear (&si);
      return;
    }
  for (; n_read < vlen; n_read++)
    {
      size_t cap = is_inet (&si) && record_send_uses_address (&si, flags) ? EMULATE_DATA_MAX
                                                                          : PAYLOAD_MAX;

      if (total >= EMULATE_MMSG_MAX)
        break;   /* sendmmsg may send fewer than asked: the rest is not sent */
      errs[n_read] = msg_copy_read (&m, vec_addr + (uint64_t) n_read * MSG_MMSGHDR_SIZE, cap,
                                    true, &copies[n_read]);
      total += copies[n_read].data.len;
      if (copies[n_read].named || errs[n_read] == -EFAULT)
        emulate = true;
      if (errs[n_read] < 0)
        {
          n_read++;
          break;   /* the kernel stops at the first failing entry too */
        }
    }
  emulate = emulate && is_inet (&si) && record_send_uses_address (&si, flags);
  if (!still_valid (c->n, req->id))
    goto out;
  for (unsigned i = 0; i < n_read; i++)
    {
      uint64_t seq;

      if (rec_message (c, &si, fd, flags,
                       emulate ? AIRLOCK_ACTION_EMULATE : AIRLOCK_ACTION_CONTINUE, &copies[i],
                       errs[i], i, vlen, true, &seq) < 0)
        goto out;
      if (i == 0)
        first_seq = seq;
    }
  if (n_read == 0)
    {
      /* vlen 0: nothing to send, nothing to record but the call. */
      struct record rec;

      rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
      record_mmsg_empty (&rec, &c->pi, fd, &si);
      rec_send (&rec, NULL);
      respond (c->n, req->id, 0, 0, true);
      goto out;
    }
  if (!emulate)
    {
      respond (c->n, req->id, 0, 0, true);
      goto out;
    }
  /* Entries before the first bad one are sent; a bad first one fails the
   * call with its errno (net/socket.c __sys_sendmmsg). */
  {
    unsigned good = 0;

    while (good < n_read && errs[good] == 0)
      good++;
    if (good == 0)
      {
        fail_emulated (c->n, req->id, first_seq, errs[0]);
        goto out;
      }
    j = job_new (JOB_SENDMMSG, req, &si);
    if (!j)
      {
        fail_emulated (c->n, req->id, first_seq, -ENOMEM);
        goto out;
      }
    j->ref = first_seq;
    j->flags = flags;
    j->vec_addr = vec_addr;
    j->copies = copies;
    j->n_copies = good;
    j->vec = calloc (good, sizeof *j->vec);
    j->iovs = calloc (good, sizeof *j->iovs);
    copies = NULL;
    if (!j->vec || !j->iovs)
      {
        fail_emulated (c->n, req->id, first_seq, -ENOMEM);
        for (unsigned i = good; i < n_read; i++)
          msg_copy_clear (&j->copies[i]);
        job_free (j);
        goto out;
      }
    for (unsigned i = 0; i < good; i++)
      {
        struct msg_copy *mc = &j->copies[i];

        j->iovs[i].iov_base = mc->data.bytes;
        j->iovs[i].iov_len = mc->data.len;
        j->vec[i].msg_hdr.msg_name = mc->named ? mc->name : NULL;
        j->vec[i].msg_hdr.msg_namelen = mc->named ? (socklen_t) mc->name_len : 0;
        j->vec[i].msg_hdr.msg_iov = &j->iovs[i];
        j->vec[i].msg_hdr.msg_iovlen = 1;
        j->vec[i].msg_hdr.msg_control = mc->control;
        j->vec[i].msg_hdr.msg_controllen = (size_t) mc->controllen;
      }
    /* Copies past the first bad entry are not sent; free their buffers
     * (job_free frees n_copies entries only). */
    for (unsigned i = good; i < n_read; i++)
      msg_copy_clear (&j->copies[i]);
    job_start (c->n, j, !si.nonblock && !(flags & MSG_DONTWAIT));
  }
out:
  if (copies)
    for (unsigned i = 0; i < n_read; i++)
      msg_copy_clear (&copies[i]);
  free (copies);
  free (errs);
  sock_info_clear (&si);
}

/* write/writev on fd > 2: recorded only when the fd is an inet socket (a
 * send to the connected peer); everything else continues unrecorded. */
static void
handle_write (struct call *c, bool vector)
{
  const struct seccomp_notif *req = c->req;
  int fd = (int) (uint32_t) req->data.args[0];
  struct msg_mem m = mem_of ((pid_t) req->pid);
  struct msg_data data = { 0 };
  char path[64];
  struct stat st;
  struct sock_info si;
  struct record rec;

  /* The cheap test first: one stat of the caller's fd link. */
  snprintf (path, sizeof path, "/proc/%d/fd/%d", req->pid, fd);
  if (stat (path, &st) < 0 || !S_ISSOCK (st.st_mode))
    {
      respond (c->n, req->id, 0, 0, true);
      return;
    }
  read_proc_info ((pid_t) req->pid, &c->pi);
  sock_info_get (c->pi.tgid ? c->pi.tgid : req->pid, fd, &si);
  if (!is_inet (&si))
    {
      sock_info_clear (&si);
      respond (c->n, req->id, 0, 0, true);
      return;
    }
  net_hold_touch ();
  if (vector)
    msg_gather_iov (&m, req->data.args[1], req->data.args[2], PAYLOAD_MAX, &data);
  else
    {
      uint64_t len = req->data.args[2] > MSG_MAX_RW_COUNT ? MSG_MAX_RW_COUNT : req->data.args[2];
      size_t want = len < PAYLOAD_MAX ? (size_t) len : PAYLOAD_MAX;

      data.total = len;
      data.bytes = want ? malloc (want) : NULL;
      if (data.bytes && msg_read_exact (&m, req->data.args[1], data.bytes, want) == 0)
        data.len = want;
    }
  if (still_valid (c->n, req->id))
    {
      rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
      record_write (&rec, &c->pi, fd, &si, &data);
      rec_send (&rec, NULL);
      respond (c->n, req->id, 0, 0, true);
    }
  free (data.bytes);
  sock_info_clear (&si);
}

static void
handle_exec (struct call *c, bool at)
{
  const struct seccomp_notif *req = c->req;
  uint64_t path_addr = at ? req->data.args[1] : req->data.args[0];
  uint64_t argv_addr = at ? req->data.args[2] : req->data.args[1];
  static char path[RECORD_PATH_MAX], argv[RECORD_ARGV_MAX];
  ssize_t path_len = mem_read_string ((pid_t) req->pid, path_addr, path, sizeof path);
  size_t argv_len = mem_read_argv ((pid_t) req->pid, argv_addr, argv, sizeof argv);
  struct record rec;

  if (still_valid (c->n, req->id))
    {
      rec_start (&rec, c, AIRLOCK_ACTION_CONTINUE);
      record_exec (&rec, &c->pi, path, path_len, argv, argv_len);
      rec_send (&rec, NULL);
    }
  respond (c->n, req->id, 0, 0, true);
}

/* clone3 keeps its flags in memory the filter cannot read; libcs fall back
 * to clone on ENOSYS, so every thread start of a modern glibc program asks
 * once.  Recorded once per process: the denial is not an escape. */
static void
handle_clone3 (struct call *c)
{
  struct notifier *n = c->n;
  pid_t key = (pid_t) (c->pi.tgid ? c->pi.tgid : c->req->pid);

  for (size_t i = 0; i < n->n_clone3_seen; i++)
    if (n->clone3_seen[i] == key)
      {
        respond (n, c->req->id, 0, -ENOSYS, false);
        return;
      }
  if (n->n_clone3_seen < CLONE3_SEEN_MAX)
    n->clone3_seen[n->n_clone3_seen++] = key;
  deny (c, AIRLOCK_DENY_CLONE3, ENOSYS);
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
  if (nr == SYS_write || nr == SYS_writev)
    {
      handle_write (&c, nr == SYS_writev);
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
      net_hold_touch ();
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
      net_hold_touch ();
      handle_sendto (&c);
      break;
    case SYS_sendmsg:
      net_hold_touch ();
      handle_sendmsg (&c);
      break;
    case SYS_sendmmsg:
      net_hold_touch ();
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
