/* Socket-aware sockaddr decoding (see sockaddr.h,
 * airlock_sockaddr_decode_for_socket()).
 *
 * The socket, not the bytes, decides how an address is read: UDP sendto()
 * takes an AF_UNSPEC sockaddr_in as AF_INET, connect() takes it as
 * "disconnect", a packet socket reads any family as sockaddr_ll.  Each rule
 * sits next to the kernel function that applies it (paths relative to a
 * Linux 6.1 tree; unchanged in mainline).  Lengths are checked before
 * every read, and are at most AIRLOCK_SOCKADDR_MAX by then. */
#include "config.h"

#include "sockaddr-private.h"

#include <netinet/in.h>

static const char *
call_name (AirlockSockaddrCall call)
{
  switch (call)
    {
    case AIRLOCK_SOCKADDR_CALL_CONNECT:
      return "connect()";
    case AIRLOCK_SOCKADDR_CALL_BIND:
      return "bind()";
    case AIRLOCK_SOCKADDR_CALL_SENDTO:
      return "sendto()";
    case AIRLOCK_SOCKADDR_CALL_SENDMSG:
    default:
      return "sendmsg()";
    }
}

static gboolean
call_is_send (AirlockSockaddrCall call)
{
  return call == AIRLOCK_SOCKADDR_CALL_SENDTO || call == AIRLOCK_SOCKADDR_CALL_SENDMSG;
}

typedef enum {
  INET_STREAM,  /* TCP, MPTCP */
  INET_UDP,     /* UDP, UDP-Lite */
  INET_PING,    /* SOCK_DGRAM + ICMP / ICMPv6 */
  INET_RAW,
  INET_OTHER,   /* SCTP, DCCP, …: family-driven fallback */
} InetKind;

/* Which proto the kernel binds for (type, protocol), as inet_create() and
 * inet6_create() look it up in inetsw (protocol 0 is the type's default). */
static InetKind
inet_kind (int family, int type, int protocol)
{
  switch (type)
    {
    case SOCK_STREAM:
      if (protocol == 0 || protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP)
        return INET_STREAM;
      return INET_OTHER;
    case SOCK_DGRAM:
      if (protocol == 0 || protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE)
        return INET_UDP;
      if ((family == AF_INET && protocol == IPPROTO_ICMP)
          || (family == AF_INET6 && protocol == IPPROTO_ICMPV6))
        return INET_PING;
      return INET_OTHER;
    case SOCK_RAW:
      return INET_RAW;
    default:
      return INET_OTHER;
    }
}

/* A socket of family AF_INET. */
static gboolean
decode_inet4_socket (InetKind kind, AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                     AirlockSockaddr *sa, GError **error)
{
  const char *what = call_name (call);
  guint16 family;

  switch (call)
    {
    case AIRLOCK_SOCKADDR_CALL_CONNECT:
      /* net/ipv4/af_inet.c __inet_stream_connect, inet_dgram_connect:
       * shorter than sa_family is EINVAL, AF_UNSPEC disconnects; then
       * tcp_v4_connect / __ip4_datagram_connect want a whole sockaddr_in
       * (EINVAL) of family AF_INET (EAFNOSUPPORT). */
      if (!airlock_sa_has_family (what, len, error))
        return FALSE;
      family = sockaddr_get_le16 (bytes);
      if (family == AF_UNSPEC)
        {
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_DISCONNECT, bytes, len);
          return TRUE;
        }
      if (!airlock_sa_min_len (what, "struct sockaddr_in", SOCKADDR_IN_LEN, "EINVAL", len, error))
        return FALSE;
      if (family != AF_INET)
        return airlock_sa_wrong_family (what, family, "AF_INET", "EAFNOSUPPORT", error);
      airlock_sa_read_in (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_BIND:
      if (!airlock_sa_min_len (what, "struct sockaddr_in", SOCKADDR_IN_LEN, "EINVAL", len, error))
        return FALSE;
      family = sockaddr_get_le16 (bytes);
      /* net/ipv4/raw.c raw_bind() checks only the length.  __inet_bind()
       * and ping_check_bind_addr() take AF_INET, and AF_UNSPEC only with
       * INADDR_ANY ("compatibility games"); anything else is
       * EAFNOSUPPORT. */
      if (kind != INET_RAW && family != AF_INET
          && !(family == AF_UNSPEC && sockaddr_get_be32 (bytes + 4) == INADDR_ANY))
        return airlock_sa_wrong_family (what, family, "AF_INET (or AF_UNSPEC with INADDR_ANY)",
                                        "EAFNOSUPPORT", error);
      airlock_sa_read_in (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_SENDTO:
    case AIRLOCK_SOCKADDR_CALL_SENDMSG:
    default:
      if (kind == INET_STREAM)
        {
          /* net/ipv4/tcp.c tcp_sendmsg_locked() reads msg_name only for
           * MSG_FASTOPEN (tcp_sendmsg_fastopen): decode those as
           * connect. */
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          return TRUE;
        }
      if (kind == INET_RAW && len == 0)
        {
          /* net/ipv4/raw.c raw_sendmsg() tests msg_namelen, not msg_name. */
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          return TRUE;
        }
      if (!airlock_sa_min_len (what, "struct sockaddr_in", SOCKADDR_IN_LEN, "EINVAL", len, error))
        return FALSE;
      family = sockaddr_get_le16 (bytes);
      /* net/ipv4/udp.c udp_sendmsg() and raw_sendmsg() send to an
       * AF_UNSPEC sockaddr_in as if it were AF_INET (raw_sendmsg logs
       * "forgot to set AF_INET"); net/ipv4/ping.c ping_v4_sendmsg() does
       * not. */
      if (family != AF_INET && !(family == AF_UNSPEC && kind != INET_PING))
        return airlock_sa_wrong_family (what, family,
                                        kind == INET_PING ? "AF_INET" : "AF_INET (or AF_UNSPEC)",
                                        "EAFNOSUPPORT", error);
      airlock_sa_read_in (sa, bytes, len);
      return TRUE;
    }
}

/* A socket of family AF_INET6. */
static gboolean
decode_inet6_socket (InetKind kind, AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                     AirlockSockaddr *sa, GError **error)
{
  const char *what = call_name (call);
  guint16 family;

  switch (call)
    {
    case AIRLOCK_SOCKADDR_CALL_CONNECT:
      if (!airlock_sa_has_family (what, len, error))
        return FALSE;
      family = sockaddr_get_le16 (bytes);
      if (family == AF_UNSPEC)
        {
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_DISCONNECT, bytes, len);
          return TRUE;
        }
      if (kind != INET_STREAM && family == AF_INET)
        {
          /* net/ipv6/datagram.c __ip6_datagram_connect(): a dual-stack
           * datagram socket connects to an IPv4 address through
           * __ip4_datagram_connect() (EAFNOSUPPORT with IPV6_V6ONLY). */
          if (!airlock_sa_min_len (what, "struct sockaddr_in", SOCKADDR_IN_LEN, "EINVAL", len,
                                   error))
            return FALSE;
          airlock_sa_read_in (sa, bytes, len);
          return TRUE;
        }
      /* net/ipv6/tcp_ipv6.c tcp_v6_connect(), __ip6_datagram_connect():
       * fewer than SIN6_LEN_RFC2133 bytes is EINVAL, another family
       * EAFNOSUPPORT (TCP takes no AF_INET sockaddr). */
      if (!airlock_sa_min_len (what, "an RFC 2133 struct sockaddr_in6", SOCKADDR_IN6_LEN_RFC2133,
                               "EINVAL", len, error))
        return FALSE;
      if (family != AF_INET6)
        return airlock_sa_wrong_family (what, family, "AF_INET6", "EAFNOSUPPORT", error);
      airlock_sa_read_in6 (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_BIND:
      /* net/ipv4/ping.c ping_check_bind_addr() wants a whole
       * sockaddr_in6; net/ipv6/af_inet6.c inet6_bind() and net/ipv6/raw.c
       * rawv6_bind() an RFC 2133 one.  Family: EINVAL for raw,
       * EAFNOSUPPORT otherwise. */
      if (kind == INET_PING)
        {
          if (!airlock_sa_min_len (what, "struct sockaddr_in6", SOCKADDR_IN6_LEN, "EINVAL", len,
                                   error))
            return FALSE;
        }
      else if (!airlock_sa_min_len (what, "an RFC 2133 struct sockaddr_in6",
                                    SOCKADDR_IN6_LEN_RFC2133, "EINVAL", len, error))
        return FALSE;
      family = sockaddr_get_le16 (bytes);
      if (family != AF_INET6)
        return airlock_sa_wrong_family (what, family, "AF_INET6",
                                        kind == INET_RAW ? "EINVAL" : "EAFNOSUPPORT", error);
      airlock_sa_read_in6 (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_SENDTO:
    case AIRLOCK_SOCKADDR_CALL_SENDMSG:
    default:
      if (kind == INET_STREAM)
        {
          /* As for IPv4: only MSG_FASTOPEN reads the address. */
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          return TRUE;
        }
      if (kind == INET_PING)
        {
          /* net/ipv6/ping.c ping_v6_sendmsg(): a whole sockaddr_in6 of
           * family AF_INET6. */
          if (!airlock_sa_min_len (what, "struct sockaddr_in6", SOCKADDR_IN6_LEN, "EINVAL", len,
                                   error))
            return FALSE;
          family = sockaddr_get_le16 (bytes);
          if (family != AF_INET6)
            return airlock_sa_wrong_family (what, family, "AF_INET6", "EAFNOSUPPORT", error);
          airlock_sa_read_in6 (sa, bytes, len);
          return TRUE;
        }
      if (kind == INET_RAW)
        {
          /* net/ipv6/raw.c rawv6_sendmsg(): an RFC 2133 sockaddr_in6 whose
           * family is AF_INET6 or 0, taken as AF_INET6.  sin6_port is the
           * protocol, not a port. */
          if (!airlock_sa_min_len (what, "an RFC 2133 struct sockaddr_in6",
                                   SOCKADDR_IN6_LEN_RFC2133, "EINVAL", len, error))
            return FALSE;
          family = sockaddr_get_le16 (bytes);
          if (family != AF_INET6 && family != AF_UNSPEC)
            return airlock_sa_wrong_family (what, family, "AF_INET6 (or AF_UNSPEC)", "EAFNOSUPPORT",
                                            error);
          airlock_sa_read_in6 (sa, bytes, len);
          return TRUE;
        }

      /* net/ipv6/udp.c udpv6_sendmsg(): an AF_INET sockaddr_in goes to
       * udp_sendmsg() (dual stack), AF_UNSPEC means "no address", any
       * other family but AF_INET6 is EINVAL. */
      if (!airlock_sa_has_family (what, len, error))
        return FALSE;
      family = sockaddr_get_le16 (bytes);
      switch (family)
        {
        case AF_INET6:
          if (!airlock_sa_min_len (what, "an RFC 2133 struct sockaddr_in6",
                                   SOCKADDR_IN6_LEN_RFC2133, "EINVAL", len, error))
            return FALSE;
          airlock_sa_read_in6 (sa, bytes, len);
          return TRUE;
        case AF_INET:
          if (!airlock_sa_min_len (what, "struct sockaddr_in", SOCKADDR_IN_LEN, "EINVAL", len,
                                   error))
            return FALSE;
          airlock_sa_read_in (sa, bytes, len);
          return TRUE;
        case AF_UNSPEC:
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          return TRUE;
        default:
          return airlock_sa_wrong_family (what, family, "AF_INET6, AF_INET or AF_UNSPEC", "EINVAL",
                                          error);
        }
    }
}

static gboolean
decode_unix_socket (int type, AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                    AirlockSockaddr *sa, GError **error)
{
  const char *what = call_name (call);

  /* net/unix/af_unix.c unix_create(): SOCK_RAW becomes SOCK_DGRAM. */
  if (type == SOCK_RAW)
    type = SOCK_DGRAM;
  if (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_SEQPACKET)
    return airlock_sockaddr_decode (bytes, len, sa, error);

  switch (call)
    {
    case AIRLOCK_SOCKADDR_CALL_CONNECT:
      if (type == SOCK_DGRAM)
        {
          /* unix_dgram_connect(): AF_UNSPEC disconnects. */
          if (!airlock_sa_has_family (what, len, error))
            return FALSE;
          if (sockaddr_get_le16 (bytes) == AF_UNSPEC)
            {
              airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_DISCONNECT, bytes, len);
              return TRUE;
            }
        }
      /* unix_stream_connect() (stream and seqpacket) validates at once. */
      if (!airlock_sa_unix_name (what, bytes, len, error))
        return FALSE;
      airlock_sa_read_un (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_BIND:
      /* unix_bind(): the lone family autobinds. */
      if (len == SOCKADDR_FAMILY_LEN && sockaddr_get_le16 (bytes) == AF_UNIX)
        {
          airlock_sa_read_un (sa, bytes, len);
          return TRUE;
        }
      if (!airlock_sa_unix_name (what, bytes, len, error))
        return FALSE;
      airlock_sa_read_un (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_SENDTO:
    case AIRLOCK_SOCKADDR_CALL_SENDMSG:
    default:
      if (len == 0 || type == SOCK_SEQPACKET)
        {
          /* unix_dgram_sendmsg() and unix_stream_sendmsg() test
           * msg_namelen; unix_seqpacket_sendmsg() zeroes it. */
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          return TRUE;
        }
      if (type == SOCK_STREAM)
        return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED,
                                 "%s: a unix stream socket takes no destination address "
                                 "(%" G_GSIZE_FORMAT " bytes given); the kernel refuses it "
                                 "with EOPNOTSUPP, or EISCONN when connected",
                                 what, len);
      if (!airlock_sa_unix_name (what, bytes, len, error))
        return FALSE;
      airlock_sa_read_un (sa, bytes, len);
      return TRUE;
    }
}

static gboolean
decode_netlink_socket (AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                       AirlockSockaddr *sa, GError **error)
{
  const char *what = call_name (call);

  if (call == AIRLOCK_SOCKADDR_CALL_CONNECT)
    {
      /* net/netlink/af_netlink.c netlink_connect(): AF_UNSPEC disconnects
       * before the length is checked. */
      if (!airlock_sa_has_family (what, len, error))
        return FALSE;
      if (sockaddr_get_le16 (bytes) == AF_UNSPEC)
        {
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_DISCONNECT, bytes, len);
          return TRUE;
        }
      if (sockaddr_get_le16 (bytes) != AF_NETLINK)
        return airlock_sa_wrong_family (what, sockaddr_get_le16 (bytes), "AF_NETLINK", "EINVAL",
                                        error);
    }
  else if (call_is_send (call) && len == 0)
    {
      /* netlink_sendmsg() tests msg_namelen. */
      airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
      return TRUE;
    }

  /* netlink_bind() and netlink_sendmsg(): a whole sockaddr_nl (EINVAL),
   * then the family (EINVAL). */
  if (!airlock_sa_min_len (what, "struct sockaddr_nl", SOCKADDR_NL_LEN, "EINVAL", len, error))
    return FALSE;
  if (sockaddr_get_le16 (bytes) != AF_NETLINK)
    return airlock_sa_wrong_family (what, sockaddr_get_le16 (bytes), "AF_NETLINK", "EINVAL", error);
  airlock_sa_read_nl (sa, bytes, len);
  return TRUE;
}

static gboolean
decode_packet_socket (int type, AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                      AirlockSockaddr *sa, GError **error)
{
  const char *what = call_name (call);

  /* SOCK_PACKET sockets use struct sockaddr_pkt: not decoded here. */
  if (type != SOCK_RAW && type != SOCK_DGRAM)
    return airlock_sockaddr_decode (bytes, len, sa, error);

  switch (call)
    {
    case AIRLOCK_SOCKADDR_CALL_CONNECT:
      return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED,
                               "%s: packet sockets cannot connect; the kernel refuses it with "
                               "EOPNOTSUPP",
                               what);

    case AIRLOCK_SOCKADDR_CALL_BIND:
      /* net/packet/af_packet.c packet_bind() */
      if (!airlock_sa_min_len (what, "struct sockaddr_ll", SOCKADDR_LL_LEN, "EINVAL", len, error))
        return FALSE;
      if (sockaddr_get_le16 (bytes) != AF_PACKET)
        return airlock_sa_wrong_family (what, sockaddr_get_le16 (bytes), "AF_PACKET", "EINVAL",
                                        error);
      airlock_sa_read_ll (sa, bytes, len);
      return TRUE;

    case AIRLOCK_SOCKADDR_CALL_SENDTO:
    case AIRLOCK_SOCKADDR_CALL_SENDMSG:
    default:
      if (!airlock_sa_packet_send (what, bytes, len, error))
        return FALSE;
      airlock_sa_read_ll (sa, bytes, len);
      return TRUE;
    }
}

static gboolean
decode_vsock_socket (int type, AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                     AirlockSockaddr *sa, GError **error)
{
  const char *what = call_name (call);

  if (call_is_send (call) && type != SOCK_DGRAM)
    {
      /* net/vmw_vsock/af_vsock.c vsock_connectible_sendmsg() */
      if (len == 0)
        {
          airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          return TRUE;
        }
      return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED,
                               "%s: a connection-oriented vsock socket takes no destination "
                               "address (%" G_GSIZE_FORMAT " bytes given); the kernel refuses "
                               "it with EOPNOTSUPP, or EISCONN when connected",
                               what, len);
    }

  /* vsock_dgram_connect(): a whole sockaddr_vm of family AF_UNSPEC
   * disconnects. */
  if (call == AIRLOCK_SOCKADDR_CALL_CONNECT && type == SOCK_DGRAM
      && len >= SOCKADDR_VM_LEN && sockaddr_get_le16 (bytes) == AF_UNSPEC)
    {
      airlock_sa_init_effect (sa, AIRLOCK_SOCKADDR_DISCONNECT, bytes, len);
      return TRUE;
    }
  /* vsock_dgram_sendmsg() falls back to the connected peer when the
   * address does not cast: that case is reported as the refusal. */
  if (!airlock_sa_vsock (what, bytes, len, error))
    return FALSE;
  airlock_sa_read_vm (sa, bytes, len);
  return TRUE;
}

gboolean
airlock_sockaddr_decode_for_socket (int sock_family, int sock_type, int sock_protocol,
                                    AirlockSockaddrCall call, const guint8 *bytes, gsize len,
                                    AirlockSockaddr *ret, GError **error)
{
  const char *what = call_name (call);
  int type = sock_type & SOCKADDR_SOCK_TYPE_MASK;
  AirlockSockaddr sa;
  gboolean ok;

  g_return_val_if_fail (bytes != NULL || len == 0, FALSE);
  g_return_val_if_fail (ret != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (call == AIRLOCK_SOCKADDR_CALL_SENDMSG)
    {
      /* net/socket.c __copy_msghdr(): msg_namelen above a sockaddr_storage
       * is clamped, not refused, and a zero length means no address; but
       * the kernel holds it in an int first, and a negative one is
       * EINVAL. */
      if (len > (gsize) G_MAXINT)
        return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_LONG,
                                 "%s: msg_namelen %" G_GSIZE_FORMAT " is negative as an int; "
                                 "the kernel refuses it with EINVAL",
                                 what, len);
      len = MIN (len, (gsize) AIRLOCK_SOCKADDR_MAX);
      if (len == 0)
        {
          airlock_sa_init_effect (&sa, AIRLOCK_SOCKADDR_NO_ADDRESS, bytes, len);
          *ret = sa;
          return TRUE;
        }
    }
  else if (len > AIRLOCK_SOCKADDR_MAX)
    return airlock_sa_error (error, AIRLOCK_SOCKADDR_ERROR_TOO_LONG,
                             "%s: a sockaddr of %" G_GSIZE_FORMAT " bytes is longer than "
                             "struct sockaddr_storage (128 bytes); the kernel refuses it with "
                             "EINVAL (net/socket.c move_addr_to_kernel)",
                             what, len);

  switch (sock_family)
    {
    case AF_INET:
    case AF_INET6:
      {
        InetKind kind = inet_kind (sock_family, type, sock_protocol);

        if (kind == INET_OTHER)
          ok = airlock_sockaddr_decode (bytes, len, &sa, error);
        else if (sock_family == AF_INET)
          ok = decode_inet4_socket (kind, call, bytes, len, &sa, error);
        else
          ok = decode_inet6_socket (kind, call, bytes, len, &sa, error);
        break;
      }
    case AF_UNIX:
      ok = decode_unix_socket (type, call, bytes, len, &sa, error);
      break;
    case AF_NETLINK:
      ok = decode_netlink_socket (call, bytes, len, &sa, error);
      break;
    case AF_PACKET:
      ok = decode_packet_socket (type, call, bytes, len, &sa, error);
      break;
    case AF_VSOCK:
      ok = decode_vsock_socket (type, call, bytes, len, &sa, error);
      break;
    default:
      ok = airlock_sockaddr_decode (bytes, len, &sa, error);
      break;
    }

  if (ok)
    *ret = sa;
  return ok;
}

