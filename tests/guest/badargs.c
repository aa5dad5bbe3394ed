/* Every traced call with every class of bad argument, the strace way: a
 * descriptor that is bad (-1, huge) or no socket (/dev/null), an address
 * that cannot be read, is too short, too long or of no known family, a
 * NULL or unreadable msghdr, an unreadable iovec, a huge vlen.  Then one
 * good send, which must still be recorded: a record the host rejected
 * would have ended the decoding before it (issue 19, finding 2).
 *
 * Each call must get the kernel's own result (Linux 6.1, net/socket.c):
 * the kernel-hook recorder or the supervisor records, then the kernel
 * makes the call (or, without the recorder, the supervisor makes the same
 * call itself).
 * Any other result fails the behaviour.  Raw system calls throughout, so
 * no libc wrapper checks or rewrites an argument first.  Addresses are
 * 127.0.0.1: nothing here is meant to leave the guest. */
#define _GNU_SOURCE

#include "testprog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int failures;

/* Reports call @what, which returned @r (raw: -errno), and checks it is
 * @want (a count, or -errno). */
static void
expect (const char *what, long r, long want)
{
  report_raw (what, r);
  if (r != want)
    {
      say ("%s: expected %ld, got %ld", what, want, r);
      failures++;
    }
}

static long
sys (long nr, long a, long b, long c, long d, long e, long f)
{
  long r = syscall (nr, a, b, c, d, e, f);

  return r < 0 ? -errno : r;
}

#define P(x) ((long) (uintptr_t) (x))

int
behaviour_bad_args (int argc, char **argv)
{
  /* Two pages: the first readable, the second not, so a structure can end
   * right before an unreadable one. */
  long page = sysconf (_SC_PAGESIZE);
  uint8_t *mem = mmap (NULL, 2 * (size_t) page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  uint8_t *bad;
  struct sockaddr_in sin, odd;
  socklen_t sin_len = make_sin (&sin, "127.0.0.1", 9);
  char byte = 'x';
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  struct msghdr mh;
  struct mmsghdr *last;
  int devnull, udp;
  const long huge_fd = 1 << 20;

  if (mem == MAP_FAILED || mprotect (mem + page, (size_t) page, PROT_NONE) < 0)
    {
      report ("mmap", -1);
      return TESTPROG_FAILED;
    }
  bad = mem + page;
  memset (&odd, 0, sizeof odd);
  odd.sin_family = 0x1234;   /* no such family */
  devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  udp = (int) report ("socket inet dgram", socket (AF_INET, SOCK_DGRAM, 0));
  if (devnull < 0 || udp < 0 || loopback_up (udp) < 0)
    {
      say ("setup failed");
      return TESTPROG_FAILED;
    }

  /* connect: the address is copied before the descriptor is looked at as
   * a socket (move_addr_to_kernel, then sock_from_file). */
  expect ("connect fd -1", sys (SYS_connect, -1, P (&sin), sin_len, 0, 0, 0), -EBADF);
  expect ("connect fd -1 bad address", sys (SYS_connect, -1, P (bad), sin_len, 0, 0, 0), -EBADF);
  expect ("connect huge fd", sys (SYS_connect, huge_fd, P (&sin), sin_len, 0, 0, 0), -EBADF);
  expect ("connect /dev/null", sys (SYS_connect, devnull, P (&sin), sin_len, 0, 0, 0),
          -ENOTSOCK);
  expect ("connect /dev/null bad address", sys (SYS_connect, devnull, P (bad), sin_len, 0, 0, 0),
          -EFAULT);
  expect ("connect bad address", sys (SYS_connect, udp, P (bad), sin_len, 0, 0, 0), -EFAULT);
  expect ("connect short addrlen", sys (SYS_connect, udp, P (&sin), 4, 0, 0, 0), -EINVAL);
  expect ("connect oversize addrlen", sys (SYS_connect, udp, P (&sin), 200, 0, 0, 0), -EINVAL);
  expect ("connect negative addrlen", sys (SYS_connect, udp, P (&sin), -1, 0, 0, 0), -EINVAL);
  expect ("connect unknown family", sys (SYS_connect, udp, P (&odd), sin_len, 0, 0, 0),
          -EAFNOSUPPORT);

  /* bind: the socket first (sockfd_lookup_light), then the address. */
  expect ("bind fd -1 bad address", sys (SYS_bind, -1, P (bad), sin_len, 0, 0, 0), -EBADF);
  expect ("bind /dev/null bad address", sys (SYS_bind, devnull, P (bad), sin_len, 0, 0, 0),
          -ENOTSOCK);
  expect ("bind bad address", sys (SYS_bind, udp, P (bad), sin_len, 0, 0, 0), -EFAULT);

  /* sendto: the socket, then the address, then the data. */
  expect ("sendto fd -1 bad address", sys (SYS_sendto, -1, P (&byte), 1, 0, P (bad), sin_len),
          -EBADF);
  expect ("sendto /dev/null bad data and address",
          sys (SYS_sendto, devnull, P (bad), 1, 0, P (bad), sin_len), -ENOTSOCK);
  expect ("sendto bad address", sys (SYS_sendto, udp, P (&byte), 1, 0, P (bad), sin_len), -EFAULT);
  expect ("sendto bad data", sys (SYS_sendto, udp, P (bad), 1, 0, P (&sin), sin_len), -EFAULT);
  expect ("sendto short addrlen", sys (SYS_sendto, udp, P (&byte), 1, 0, P (&sin), 4), -EINVAL);
  expect ("sendto oversize addrlen", sys (SYS_sendto, udp, P (&byte), 1, 0, P (&sin), 200),
          -EINVAL);
  expect ("sendto unknown family", sys (SYS_sendto, udp, P (&byte), 1, 0, P (&odd), sin_len),
          -EAFNOSUPPORT);

  /* sendmsg: the socket, then the msghdr, its name, its iovec array. */
  expect ("sendmsg fd -1 NULL msghdr", sys (SYS_sendmsg, -1, 0, 0, 0, 0, 0), -EBADF);
  expect ("sendmsg /dev/null bad msghdr", sys (SYS_sendmsg, devnull, P (bad), 0, 0, 0, 0),
          -ENOTSOCK);
  expect ("sendmsg NULL msghdr", sys (SYS_sendmsg, udp, 0, 0, 0, 0, 0), -EFAULT);
  expect ("sendmsg bad msghdr", sys (SYS_sendmsg, udp, P (bad), 0, 0, 0, 0), -EFAULT);
  memset (&mh, 0, sizeof mh);
  mh.msg_name = bad;
  mh.msg_namelen = sin_len;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  expect ("sendmsg bad name", sys (SYS_sendmsg, udp, P (&mh), 0, 0, 0, 0), -EFAULT);
  mh.msg_name = &sin;
  mh.msg_iov = (struct iovec *) bad;
  expect ("sendmsg bad iovec", sys (SYS_sendmsg, udp, P (&mh), 0, 0, 0, 0), -EFAULT);
  mh.msg_iov = &iov;
  mh.msg_namelen = 4;
  expect ("sendmsg short namelen", sys (SYS_sendmsg, udp, P (&mh), 0, 0, 0, 0), -EINVAL);
  mh.msg_name = &odd;
  mh.msg_namelen = sin_len;
  expect ("sendmsg unknown family", sys (SYS_sendmsg, udp, P (&mh), 0, 0, 0, 0), -EAFNOSUPPORT);
  mh.msg_name = &sin;
  mh.msg_iovlen = 1025;
  expect ("sendmsg too many iovecs", sys (SYS_sendmsg, udp, P (&mh), 0, 0, 0, 0), -EMSGSIZE);
  mh.msg_iovlen = 1;

  /* sendmmsg: vlen is clamped to UIO_MAXIOV; entries go out until the
   * first that fails, whose errno is the call's only when none went. */
  expect ("sendmmsg fd -1 NULL vector", sys (SYS_sendmmsg, -1, 0, 1, 0, 0, 0), -EBADF);
  expect ("sendmmsg /dev/null bad vector", sys (SYS_sendmmsg, devnull, P (bad), 1, 0, 0, 0),
          -ENOTSOCK);
  /* 64 readable (empty) entries: the kernel reads none of them from a
   * descriptor that is no socket, so none reaches a socket's hook (without
   * the kernel-hook recorder the supervisor records the call once). */
  expect ("sendmmsg /dev/null huge vlen", sys (SYS_sendmmsg, devnull, P (mem), 1 << 30, 0, 0, 0),
          -ENOTSOCK);
  expect ("sendmmsg NULL vector", sys (SYS_sendmmsg, udp, 0, 1, 0, 0, 0), -EFAULT);
  expect ("sendmmsg vlen 0", sys (SYS_sendmmsg, udp, 0, 0, 0, 0, 0), 0);
  last = (struct mmsghdr *) (bad - sizeof *last);
  memset (last, 0, sizeof *last);
  last->msg_hdr = mh;
  expect ("sendmmsg huge vlen, second entry unreadable",
          sys (SYS_sendmmsg, udp, P (last), 1 << 30, 0, 0, 0), 1);

  /* The calls on a descriptor alone, and the rest of what is traced. */
  expect ("listen fd -1", sys (SYS_listen, -1, 1, 0, 0, 0, 0), -EBADF);
  expect ("listen /dev/null", sys (SYS_listen, devnull, 1, 0, 0, 0, 0), -ENOTSOCK);
  expect ("accept4 fd -1 bad address", sys (SYS_accept4, -1, P (bad), P (bad), 0, 0, 0), -EBADF);
  expect ("accept4 /dev/null bad address", sys (SYS_accept4, devnull, P (bad), P (bad), 0, 0, 0),
          -ENOTSOCK);
  expect ("socketpair bad vector", sys (SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, P (bad), 0, 0),
          -EFAULT);
  expect ("execve bad path", sys (SYS_execve, P (bad), 0, 0, 0, 0, 0), -EFAULT);
  expect ("execve bad argv", sys (SYS_execve, P ("/proc/self/exe"), P (bad), 0, 0, 0, 0), -EFAULT);

  /* The good call: recorded, and sent. */
  expect ("sendto 127.0.0.1:9", sys (SYS_sendto, udp, P (&byte), 1, 0, P (&sin), sin_len), 1);

  close (udp);
  close (devnull);
  return failures == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}
