/* Hostile techniques 1-3 and 20: egress spelled so that a filter matching
 * the obvious calls would miss it. */
#define _GNU_SOURCE

#include "testprog.h"
#include "techniques.h"

#include <errno.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *
hostile_net2 (char *buf, unsigned n)
{
  snprintf (buf, 16, "198.51.100.%u", n);
  return buf;
}

const char *
hostile_net3 (char *buf, unsigned n)
{
  snprintf (buf, 16, "203.0.113.%u", n);
  return buf;
}

void
hostile_canary (unsigned n)
{
  struct sockaddr_in sa;
  char ip[16];
  int fd;

  make_sin (&sa, hostile_net2 (ip, n), 7000 + n);
  say ("canary: connect %s:%u", ip, 7000 + n);
  fd = connect_to (AF_INET, SOCK_STREAM, 0, (struct sockaddr *) &sa, sizeof sa);
  if (fd >= 0)
    close (fd);
}

/* 1.  One sendmmsg with 64 destinations (203.0.113.1-64:7001), and one
 * more message whose msg_namelen (4096) is far past any sockaddr: the
 * kernel truncates it to sizeof (struct sockaddr_storage) and sends to the
 * address at its start (203.0.113.65:7001), so the supervisor must read it
 * the kernel's way, not refuse or skip it. */
#define MANY 64

int
technique_sendmmsg_many (int argc, char **argv)
{
  static struct sockaddr_in dests[MANY];
  static unsigned char oversize[4096];
  static struct mmsghdr msgs[MANY + 1];
  static struct iovec iov = { .iov_base = (void *) "x", .iov_len = 1 };
  struct sockaddr_in last;
  char ip[16];
  int fd = report ("socket(AF_INET, SOCK_DGRAM)", socket (AF_INET, SOCK_DGRAM, 0));
  int sent;

  if (fd < 0)
    return TESTPROG_FAILED;
  for (unsigned i = 0; i < MANY; i++)
    {
      make_sin (&dests[i], hostile_net3 (ip, i + 1), 7001);
      msgs[i].msg_hdr.msg_name = &dests[i];
      msgs[i].msg_hdr.msg_namelen = sizeof dests[i];
      msgs[i].msg_hdr.msg_iov = &iov;
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  make_sin (&last, hostile_net3 (ip, MANY + 1), 7001);
  memcpy (oversize, &last, sizeof last);
  msgs[MANY].msg_hdr.msg_name = oversize;
  msgs[MANY].msg_hdr.msg_namelen = sizeof oversize;
  msgs[MANY].msg_hdr.msg_iov = &iov;
  msgs[MANY].msg_hdr.msg_iovlen = 1;
  sent = (int) report ("sendmmsg (65 messages, the last with msg_namelen 4096)",
                       sendmmsg (fd, msgs, MANY + 1, 0));
  /* Sent or refused, every message must have been recorded; the program
   * ran as intended either way. */
  return sent >= 0 || errno != ENOSYS ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 2.  A UDP socket connected to one peer (198.51.100.2:7002), then a
 * datagram sent to another (203.0.113.2:7002): a supervisor that learnt the
 * socket's destination at connect would miss the second. */
int
technique_udp_connected_sendto (int argc, char **argv)
{
  struct sockaddr_in peer, other;
  char ip[16];
  int fd;

  make_sin (&peer, hostile_net2 (ip, 2), 7002);
  make_sin (&other, hostile_net3 (ip, 2), 7002);
  fd = connect_to (AF_INET, SOCK_DGRAM, 0, (struct sockaddr *) &peer, sizeof peer);
  if (fd < 0)
    return TESTPROG_FAILED;
  report ("send to the connected peer", send (fd, "a", 1, 0));
  report ("sendto 203.0.113.2:7002", sendto (fd, "b", 1, 0, (struct sockaddr *) &other, sizeof other));
  return TESTPROG_OK;
}

/* 3.  System call numbers a filter might not compare the way the kernel
 * dispatches them.  Both arches take the number as an int: connect with
 * bits set above bit 31 is still connect (198.51.100.3:7003) and must be
 * recorded as one.  Numbers past the table return ENOSYS from the kernel
 * and do nothing; x32 numbers (bit 30) and i386 numbers past the i386
 * table are another ABI, denied and recorded. */
#if defined(__x86_64__)
static long
int80 (long nr)
{
  long r;

  __asm__ volatile ("int $0x80" : "=a" (r) : "a" (nr) : "memory", "r8", "r9", "r10", "r11");
  return r;
}
#endif

int
technique_syscall_numbers (int argc, char **argv)
{
  struct sockaddr_in sa;
  char ip[16];
  int fd = report ("socket(AF_INET, SOCK_STREAM)", socket (AF_INET, SOCK_STREAM, 0));
  long high = (long) ((1UL << 32) | SYS_connect);
  long r;

  if (fd < 0)
    return TESTPROG_FAILED;
  make_sin (&sa, hostile_net2 (ip, 3), 7003);
  report ("syscall(1 << 32 | SYS_connect) to 198.51.100.3:7003",
          syscall (high, fd, (struct sockaddr *) &sa, sizeof sa));
  r = report ("syscall(4095)", syscall (4095));
  if (r >= 0)
    return TESTPROG_FAILED;
  r = report ("syscall(0x3fffffff)", syscall (0x3fffffffL));
  if (r >= 0)
    return TESTPROG_FAILED;
#if defined(__x86_64__)
  r = report ("syscall(x32 bit | 4000)", syscall (0x40000000L | 4000));
  if (r >= 0)
    return TESTPROG_FAILED;
  if (report_raw ("int $0x80 with i386 number 4000", int80 (4000)) >= 0)
    return TESTPROG_FAILED;
#endif
  return TESTPROG_OK;
}

/* 20.  io_uring with a kernel-side submission thread (SQPOLL): its calls
 * would be made by a kernel thread no filter sees.  Setup must be refused,
 * whatever its flags. */
int
technique_io_uring_sqpoll (int argc, char **argv)
{
  struct io_uring_params params;
  long ring;

  memset (&params, 0, sizeof params);
  params.flags = IORING_SETUP_SQPOLL;
  params.sq_thread_idle = 1000;
  ring = report ("io_uring_setup(IORING_SETUP_SQPOLL)", syscall (SYS_io_uring_setup, 8, &params));
  if (ring >= 0)
    {
      say ("io_uring with SQPOLL was set up: a hole");
      return TESTPROG_FAILED;
    }
  return TESTPROG_OK;
}
