/* Input layout of fuzz-sockaddr, shared with its seed generator:
 *
 *   byte 0   the call (AirlockSockaddrCall, modulo 4)
 *   byte 1   the socket family: an index into fuzz_sockaddr_families;
 *            the last entry means "byte 1 itself"
 *   byte 2   the socket type: low 3 bits index fuzz_sockaddr_types (last
 *            entry: "byte 2 itself"); bit 0x80 adds SOCK_NONBLOCK
 *   byte 3   the protocol: an index into fuzz_sockaddr_protocols (last
 *            entry: "byte 3 itself")
 *   rest     the sockaddr bytes, as many as there are */
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#define FUZZ_SOCKADDR_HEADER 4
#define FUZZ_SOCKADDR_SELF (-1)

static const int fuzz_sockaddr_families[] = {
  AF_INET, AF_INET6, AF_UNIX, AF_NETLINK, AF_PACKET, AF_VSOCK, AF_UNSPEC, FUZZ_SOCKADDR_SELF,
};

static const int fuzz_sockaddr_types[] = {
  SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET, SOCK_PACKET, SOCK_DCCP, SOCK_RDM,
  FUZZ_SOCKADDR_SELF,
};

static const int fuzz_sockaddr_protocols[] = {
  0, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_UDPLITE, IPPROTO_MPTCP,
  IPPROTO_SCTP, IPPROTO_RAW, FUZZ_SOCKADDR_SELF,
};

#define FUZZ_N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

/* The index of @value in @table, for the generator. */
static inline unsigned char
fuzz_sockaddr_index (const int *table, unsigned n, int value)
{
  for (unsigned i = 0; i < n; i++)
    if (table[i] == value)
      return (unsigned char) i;
  return (unsigned char) (n - 1);
}
