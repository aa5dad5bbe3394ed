/* What the supervisor learns about a notified call before it records it:
 * who is calling (/proc), the caller's memory (process_vm_readv), and the
 * socket the call names (our pidfd_getfd duplicate of it).  Part of one
 * notification (notify.c). */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "notify.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

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

struct msg_mem
mem_of (pid_t tid)
{
  return (struct msg_mem) { .read = mem_read_cb, .ctx = (void *) (intptr_t) tid };
}

/* Reads a NUL-terminated string of at most @size - 1 bytes, page by page
 * (a string may end right before an unmapped page).  Returns its length or
 * -EFAULT. */
ssize_t
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
size_t
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

void
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

void
sock_info_clear (struct sock_info *si)
{
  if (si->fd >= 0)
    close (si->fd);
  si->fd = -1;
}

bool
is_inet (const struct sock_info *si)
{
  return si->is_socket && (si->family == AF_INET || si->family == AF_INET6);
}

