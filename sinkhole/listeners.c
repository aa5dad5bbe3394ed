/* What the rules redirect to the sinkhole's listeners, answered and
 * recorded: TCP connections (the first bytes judged, a fixture sent or the
 * connection closed), DNS over TCP and UDP (answered from the names
 * handed out), and the drain for all other UDP (recorded by the relay from
 * the frame). */
#define _GNU_SOURCE
#include "server.h"

#include "evidence/event.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* From linux/netfilter_ipv4.h and linux/netfilter_ipv6/ip6_tables.h,
 * which clash with glibc's <netinet/in.h>: the getsockopt that returns a
 * redirected connection's destination before the redirect. */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif
#define AIRLOCK_IP6T_SO_ORIGINAL_DST 80

gboolean
sinkhole_write_all (int fd, const guint8 *data, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p = { .fd = fd, .events = POLLOUT };
          if (poll (&p, 1, 1000) <= 0)
            return FALSE;
          continue;
        }
      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

static void
conn_close (Conn *c)
{
  Sinkhole *sh = c->sh;

  if (c->watch)
    g_source_remove (c->watch);
  if (c->timer)
    g_source_remove (c->timer);
  close (c->fd);
  if (!c->detect_done)
    {
      airlock_sinkhole_detected_clear (&c->rec->detected);
      airlock_sinkhole_detect (c->in->data, c->in->len, c->rec->port, TRUE, &c->rec->detected);
    }
  c->rec->end_us = sinkhole_now_us (sh);
  g_bytes_unref (c->rec->client_bytes);
  c->rec->client_bytes = g_bytes_new (c->in->data, c->in->len);
  g_bytes_unref (c->rec->server_bytes);
  c->rec->server_bytes = g_bytes_new (c->out->data, c->out->len);
  if (!c->rec->response)
    c->rec->response = g_strdup ("closed");
  sinkhole_write_record (sh, c->rec);
  airlock_sinkhole_record_free (c->rec);
  g_byte_array_unref (c->in);
  g_byte_array_unref (c->out);
  if (c->dns_buf)
    g_byte_array_unref (c->dns_buf);
  g_hash_table_remove (sh->conns, c);
  g_free (c);
}

static void
conn_send (Conn *c, const guint8 *data, gsize len)
{
  gsize keep = MIN (len, AIRLOCK_SINKHOLE_FIRST_BYTES_MAX - MIN (c->out->len,
                                                                  AIRLOCK_SINKHOLE_FIRST_BYTES_MAX));

  g_byte_array_append (c->out, data, (guint) keep);
  if (sinkhole_write_all (c->fd, data, len))
    c->rec->bytes_out += len;
}

static gboolean on_conn_quiet (gpointer user_data);

/* The client's first bytes are judged: send what a fixture says, or close.
 * FALSE when the connection was closed (@c is gone). */
static gboolean
conn_respond (Conn *c)
{
  const char *name = c->rec->name;

  if (!c->detect_done)
    {
      airlock_sinkhole_detected_clear (&c->rec->detected);
      airlock_sinkhole_detect (c->in->data, c->in->len, c->rec->port, TRUE, &c->rec->detected);
      c->detect_done = TRUE;
    }
  c->fixture = NULL;
  for (guint i = 0; name && i < c->sh->fixtures->len; i++)
    {
      const Fixture *f = g_ptr_array_index (c->sh->fixtures, i);
      if (f->port == c->rec->port && g_ascii_strcasecmp (f->name, name) == 0)
        c->fixture = f;
    }
  if (!c->fixture)
    {
      conn_close (c);
      return FALSE;
    }
  /* "fixture pypi.org:80": the name as a person writes it in --serve. */
  c->rec->response = g_strdup_printf ("fixture %.*s:%u", (int) strlen (c->fixture->name) - 1,
                                      c->fixture->name, c->fixture->port);
  {
    gsize len;
    const guint8 *data = g_bytes_get_data (c->fixture->bytes, &len);
    conn_send (c, data, len);
  }
  shutdown (c->fd, SHUT_WR);
  c->lingering = TRUE;
  if (c->timer)
    g_source_remove (c->timer);
  c->timer = g_timeout_add (LINGER_MS, on_conn_quiet, c);
  return TRUE;
}

static gboolean
on_conn_quiet (gpointer user_data)
{
  Conn *c = user_data;

  c->timer = 0;
  if (c->lingering)
    conn_close (c);
  else
    (void) conn_respond (c);
  return G_SOURCE_REMOVE;
}

/* DNS over TCP: answer every whole message in the stream. */
static void
conn_dns (Conn *c)
{
  while (c->dns_buf->len >= 2)
    {
      gsize mlen = ((gsize) c->dns_buf->data[0] << 8) | c->dns_buf->data[1];
      AirlockSinkholeRecord *rec;
      g_autoptr (GBytes) reply = NULL;

      if (c->dns_buf->len < 2 + mlen)
        return;
      rec = sinkhole_record_new (c->sh, AIRLOCK_SINKHOLE_RECORD_DNS, c->rec->family,
                                 c->rec->address, c->rec->port, c->rec->client_port);
      rec->dns_transport = g_strdup ("tcp");
      g_ptr_array_unref (rec->dns.answers);
      rec->dns.answers = NULL;
      reply = airlock_sinkhole_dns_answer (c->sh->names, c->dns_buf->data + 2, mlen, &rec->dns);
      if (!rec->dns.answers)
        rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
      sinkhole_write_record (c->sh, rec);
      airlock_sinkhole_record_free (rec);
      if (reply)
        {
          gsize rlen;
          const guint8 *rdata = g_bytes_get_data (reply, &rlen);
          guint8 prefix[2] = { (guint8) (rlen >> 8), (guint8) rlen };
          conn_send (c, prefix, 2);
          conn_send (c, rdata, rlen);
        }
      g_byte_array_remove_range (c->dns_buf, 0, (guint) (2 + mlen));
    }
}

static gboolean
on_conn (int fd, GIOCondition cond, gpointer user_data)
{
  Conn *c = user_data;
  guint8 buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      c->watch = 0;
      conn_close (c);
      return G_SOURCE_REMOVE;
    }
  c->rec->bytes_in += (guint64) n;
  if (c->in->len < AIRLOCK_SINKHOLE_FIRST_BYTES_MAX)
    g_byte_array_append (c->in, buf,
                         (guint) MIN ((gsize) n, AIRLOCK_SINKHOLE_FIRST_BYTES_MAX - c->in->len));
  if (c->lingering)
    return G_SOURCE_CONTINUE;
  if (c->dns)
    {
      if (c->dns_buf->len < AIRLOCK_DNS_TCP_MESSAGE_MAX * 2)
        g_byte_array_append (c->dns_buf, buf, (guint) n);
      conn_dns (c);
    }
  if (c->timer)
    g_source_remove (c->timer);
  c->timer = 0;
  if (!c->dns)
    {
      AirlockSinkholeDetectResult r;
      gboolean full = c->in->len >= AIRLOCK_SINKHOLE_FIRST_BYTES_MAX;

      airlock_sinkhole_detected_clear (&c->rec->detected);
      r = airlock_sinkhole_detect (c->in->data, c->in->len, c->rec->port, full,
                                   &c->rec->detected);
      if (r == AIRLOCK_SINKHOLE_DETECT_DONE)
        {
          guint watch = c->watch;

          c->detect_done = TRUE;
          /* This source is the one dispatching: conn_close must not
           * remove it. */
          c->watch = 0;
          if (!conn_respond (c))
            return G_SOURCE_REMOVE;
          /* The fixture is sent: the client's further bytes and its end
           * are still read while the connection lingers, so they are in
           * its record, and a client that closes ends it (and has it
           * written) then, not LINGER_MS later. */
          c->watch = watch;
          return G_SOURCE_CONTINUE;
        }
    }
  c->timer = g_timeout_add (QUIET_MS, on_conn_quiet, c);
  return G_SOURCE_CONTINUE;
}

static gboolean
original_destination (int fd, int family, guint8 *addr, guint16 *port)
{
  if (family == AF_INET)
    {
      struct sockaddr_in sin;
      socklen_t len = sizeof sin;

      if (getsockopt (fd, SOL_IP, SO_ORIGINAL_DST, &sin, &len) < 0)
        return FALSE;
      memcpy (addr, &sin.sin_addr, 4);
      *port = ntohs (sin.sin_port);
    }
  else
    {
      struct sockaddr_in6 sin6;
      socklen_t len = sizeof sin6;

      if (getsockopt (fd, SOL_IPV6, AIRLOCK_IP6T_SO_ORIGINAL_DST, &sin6, &len) < 0)
        return FALSE;
      memcpy (addr, &sin6.sin6_addr, 16);
      *port = ntohs (sin6.sin6_port);
    }
  return TRUE;
}

static gboolean
accept_one (Sinkhole *sh, int lfd, gboolean dns)
{
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  int fd = accept4 (lfd, (struct sockaddr *) &peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
  guint8 dst[16] = { 0 };
  guint16 dport = 0, cport;
  Conn *c;

  if (fd < 0)
    return G_SOURCE_CONTINUE;
  if (!original_destination (fd, peer.ss_family, dst, &dport))
    {
      /* Not redirected: the guest connected to the listener's own address
       * and port.  getsockname is then the destination. */
      struct sockaddr_storage self;
      socklen_t slen = sizeof self;

      getsockname (fd, (struct sockaddr *) &self, &slen);
      if (self.ss_family == AF_INET)
        {
          memcpy (dst, &((struct sockaddr_in *) &self)->sin_addr, 4);
          dport = ntohs (((struct sockaddr_in *) &self)->sin_port);
        }
      else
        {
          memcpy (dst, &((struct sockaddr_in6 *) &self)->sin6_addr, 16);
          dport = ntohs (((struct sockaddr_in6 *) &self)->sin6_port);
        }
    }
  cport = peer.ss_family == AF_INET ? ntohs (((struct sockaddr_in *) &peer)->sin_port)
                                    : ntohs (((struct sockaddr_in6 *) &peer)->sin6_port);
  c = g_new0 (Conn, 1);
  c->sh = sh;
  c->fd = fd;
  c->dns = dns;
  c->rec = sinkhole_record_new (sh, AIRLOCK_SINKHOLE_RECORD_TCP, peer.ss_family, dst, dport, cport);
  c->rec->name = g_strdup (airlock_sinkhole_names_reverse (sh->names, peer.ss_family, dst));
  c->in = g_byte_array_new ();
  c->out = g_byte_array_new ();
  if (dns)
    c->dns_buf = g_byte_array_new ();
  g_hash_table_add (sh->conns, c);
  if (g_hash_table_size (sh->conns) > CONNECTIONS_MAX)
    {
      c->rec->response = g_strdup ("closed: too many connections at once");
      conn_close (c);
      return G_SOURCE_CONTINUE;
    }
  c->watch = g_unix_fd_add (fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_conn, c);
  c->timer = g_timeout_add (QUIET_MS, on_conn_quiet, c);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_accept_tcp (int lfd, GIOCondition cond, gpointer user_data)
{
  return accept_one (user_data, lfd, FALSE);
}

static gboolean
on_accept_dns (int lfd, GIOCondition cond, gpointer user_data)
{
  return accept_one (user_data, lfd, TRUE);
}

/* DNS over UDP. */

static gboolean
on_dns_udp (int fd, GIOCondition cond, gpointer user_data)
{
  Sinkhole *sh = user_data;
  guint8 buf[FRAME_MAX];
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  ssize_t n = recvfrom (fd, buf, sizeof buf, 0, (struct sockaddr *) &peer, &plen);
  AirlockSinkholeRecord *rec;
  g_autoptr (GBytes) reply = NULL;
  guint8 dst[16] = { 0 };
  guint16 cport;
  const char *sent_to;

  if (n < 0)
    return G_SOURCE_CONTINUE;
  cport = peer.ss_family == AF_INET ? ntohs (((struct sockaddr_in *) &peer)->sin_port)
                                    : ntohs (((struct sockaddr_in6 *) &peer)->sin6_port);
  /* The relay saw where the guest sent it. */
  sent_to = g_hash_table_lookup (sh->dns_dest,
                                 GUINT_TO_POINTER (((guint) peer.ss_family << 16) | cport));
  if (!sent_to || inet_pton (peer.ss_family, sent_to, dst) != 1)
    memset (dst, 0, sizeof dst);
  rec = sinkhole_record_new (sh, AIRLOCK_SINKHOLE_RECORD_DNS, peer.ss_family, dst, PORT_DNS, cport);
  rec->dns_transport = g_strdup ("udp");
  g_ptr_array_unref (rec->dns.answers);
  rec->dns.answers = NULL;
  reply = airlock_sinkhole_dns_answer (sh->names, buf, (gsize) n, &rec->dns);
  if (!rec->dns.answers)
    rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
  rec->bytes_in = (guint64) n;
  g_bytes_unref (rec->client_bytes);
  rec->client_bytes = g_bytes_new (buf, MIN ((gsize) n, AIRLOCK_SINKHOLE_DATAGRAM_BYTES_MAX));
  if (reply)
    {
      gsize rlen;
      const guint8 *rdata = g_bytes_get_data (reply, &rlen);

      if (sendto (fd, rdata, rlen, 0, (struct sockaddr *) &peer, plen) >= 0)
        rec->bytes_out = rlen;
      g_bytes_unref (rec->server_bytes);
      rec->server_bytes = g_bytes_ref (reply);
    }
  sinkhole_write_record (sh, rec);
  airlock_sinkhole_record_free (rec);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_udp_drain (int fd, GIOCondition cond, gpointer user_data)
{
  guint8 buf[FRAME_MAX];

  /* Recorded from the frame by the relay (note_guest_frame). */
  (void) recv (fd, buf, sizeof buf, 0);
  return G_SOURCE_CONTINUE;
}

void
sinkhole_listeners_start (Sinkhole *sh)
{
  g_unix_fd_add (sinkhole_listen_on (AF_INET, SOCK_STREAM, PORT_TCP), G_IO_IN, on_accept_tcp, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET6, SOCK_STREAM, PORT_TCP), G_IO_IN, on_accept_tcp, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET, SOCK_STREAM, PORT_DNS), G_IO_IN, on_accept_dns, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET6, SOCK_STREAM, PORT_DNS), G_IO_IN, on_accept_dns, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET, SOCK_DGRAM, PORT_DNS), G_IO_IN, on_dns_udp, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET6, SOCK_DGRAM, PORT_DNS), G_IO_IN, on_dns_udp, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET, SOCK_DGRAM, PORT_UDP), G_IO_IN, on_udp_drain, sh);
  g_unix_fd_add (sinkhole_listen_on (AF_INET6, SOCK_DGRAM, PORT_UDP), G_IO_IN, on_udp_drain, sh);
}

void
sinkhole_close_connections (Sinkhole *sh)
{
  GList *conns = g_hash_table_get_keys (sh->conns);

  for (GList *l = conns; l; l = l->next)
    conn_close (l->data);
  g_list_free (conns);
}
