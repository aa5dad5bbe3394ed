/* One handler per notified system call: what it reads of the call, the
 * record it writes, and its answer (continue, emulate, deny).  Called by
 * notifier_handle_one() (notify.c), with the caller already known. */
#define _GNU_SOURCE

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "notify.h"

#define PAYLOAD_MAX RECORD_PAYLOAD_MAX
/* UDP refuses more than 64 KiB in one datagram (udp_sendmsg); a TCP Fast
 * Open send is cut here (a short send is legal on a stream). */
#define EMULATE_DATA_MAX 65536
/* All entries of one emulated sendmmsg together. */
#define EMULATE_MMSG_MAX (4u * 1024 * 1024)

/* Which sockets a workload may create; see enum airlock_deny_reason. */
void
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

void
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
void
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

void
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
void
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

void
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

void
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

/* write/writev on fd > 2 (without the kernel-hook recorder), sendfile and
 * splice: recorded only when the descriptor written is an inet socket (a
 * send to the connected peer); everything else continues unrecorded.
 * sendfile(out, in, offset, count) and splice(in, off_in, out, off_out,
 * len, flags) send bytes of a file or a pipe, not of the caller's memory:
 * their length is recorded, not their bytes. */
void
handle_write (struct call *c, enum write_call kind)
{
  const struct seccomp_notif *req = c->req;
  int fd = (int) (uint32_t) req->data.args[kind == WRITE_SPLICE ? 2 : 0];
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
  clock_hold_after_network ();
  if (kind == WRITE_SENDFILE || kind == WRITE_SPLICE)
    data.total = req->data.args[kind == WRITE_SPLICE ? 4 : 3];
  else if (kind == WRITE_WRITEV)
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
      if ((kind == WRITE_SENDFILE || kind == WRITE_SPLICE) && si.peer_len >= 4
          && msg_sockaddr_port (si.peer, si.peer_len) == 53)
        record_note (&rec, "payload not read (the bytes come from a file or a pipe)");
      rec_send (&rec, NULL);
      respond (c->n, req->id, 0, 0, true);
    }
  free (data.bytes);
  sock_info_clear (&si);
}

void
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
  /* The memo keeps what it read of the binary this execve replaces, with
   * that binary's identity: a record of a call made before the exec and
   * read after it is named after the binary that made it (hooks.c). */
  respond (c->n, req->id, 0, 0, true);
}

/* clone3 keeps its flags in memory the filter cannot read; libcs fall back
 * to clone on ENOSYS, so every thread start of a modern glibc program asks
 * once.  Recorded once per process: the denial is not an escape. */
void
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

