/* Bytes a sinkhole client sends, built by hand for tests/unit/test-sinkhole.c
 * and tests/fuzz/gen-sinkhole-corpus.c: a TLS ClientHello laid out the way a
 * TLS 1.3 client writes it (no TLS library: the parser is checked against the
 * format, not against another implementation); and an empty record of what
 * the sinkhole served, for them and network-run.h.  Header-only. */
#pragma once

#include "sinkhole/sinkhole.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

static inline void
sb_u8 (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

static inline void
sb_be16 (GByteArray *b, guint16 v)
{
  sb_u8 (b, v >> 8);
  sb_u8 (b, v & 0xff);
}

static inline void
sb_be24 (GByteArray *b, guint32 v)
{
  sb_u8 (b, (v >> 16) & 0xff);
  sb_be16 (b, v & 0xffff);
}

static inline void
sb_raw (GByteArray *b, const void *data, gsize len)
{
  g_byte_array_append (b, data, (guint) len);
}

static inline void
sb_text (GByteArray *b, const char *s)
{
  sb_raw (b, s, strlen (s));
}

static inline void
sb_fill (GByteArray *b, guint8 v, gsize n)
{
  for (gsize i = 0; i < n; i++)
    sb_u8 (b, v);
}

/* A ClientHello as a TLS 1.3 client (curl over OpenSSL 3) lays it out:
 * legacy_version 1.2, a session ID, TLS 1.3 and 1.2 suites, and the
 * extensions SNI, ec_point_formats, supported_groups, ALPN,
 * signature_algorithms, supported_versions (GREASE first), psk modes and
 * an X25519 key share.  @alpn and @versions NULL leave those out. */
static inline GByteArray *
sb_client_hello (const char *sni, const char *const *alpn, const guint16 *versions,
                 gsize n_versions)
{
  GByteArray *ext = g_byte_array_new ();
  GByteArray *body = g_byte_array_new ();
  GByteArray *msg = g_byte_array_new ();

  if (sni)
    {
      sb_be16 (ext, 0x0000);
      sb_be16 (ext, (guint16) (strlen (sni) + 5));
      sb_be16 (ext, (guint16) (strlen (sni) + 3));
      sb_u8 (ext, 0);
      sb_be16 (ext, (guint16) strlen (sni));
      sb_text (ext, sni);
    }
  sb_be16 (ext, 0x000b);         /* ec_point_formats */
  sb_be16 (ext, 4);
  sb_u8 (ext, 3);
  sb_u8 (ext, 0);
  sb_u8 (ext, 1);
  sb_u8 (ext, 2);
  sb_be16 (ext, 0x000a);         /* supported_groups */
  sb_be16 (ext, 8);
  sb_be16 (ext, 6);
  sb_be16 (ext, 0x001d);
  sb_be16 (ext, 0x0017);
  sb_be16 (ext, 0x0018);
  if (alpn)
    {
      gsize list = 0;

      for (gsize i = 0; alpn[i]; i++)
        list += 1 + strlen (alpn[i]);
      sb_be16 (ext, 0x0010);
      sb_be16 (ext, (guint16) (list + 2));
      sb_be16 (ext, (guint16) list);
      for (gsize i = 0; alpn[i]; i++)
        {
          sb_u8 (ext, (guint8) strlen (alpn[i]));
          sb_text (ext, alpn[i]);
        }
    }
  sb_be16 (ext, 0x000d);         /* signature_algorithms */
  sb_be16 (ext, 8);
  sb_be16 (ext, 6);
  sb_be16 (ext, 0x0403);
  sb_be16 (ext, 0x0804);
  sb_be16 (ext, 0x0401);
  if (versions)
    {
      sb_be16 (ext, 0x002b);
      sb_be16 (ext, (guint16) (1 + 2 * n_versions));
      sb_u8 (ext, (guint8) (2 * n_versions));
      for (gsize i = 0; i < n_versions; i++)
        sb_be16 (ext, versions[i]);
    }
  sb_be16 (ext, 0x002d);         /* psk_key_exchange_modes */
  sb_be16 (ext, 2);
  sb_u8 (ext, 1);
  sb_u8 (ext, 1);
  sb_be16 (ext, 0x0033);         /* key_share: X25519 */
  sb_be16 (ext, 38);
  sb_be16 (ext, 36);
  sb_be16 (ext, 0x001d);
  sb_be16 (ext, 32);
  sb_fill (ext, 0x42, 32);

  sb_be16 (body, 0x0303);
  sb_fill (body, 0x5a, 32);      /* random */
  sb_u8 (body, 32);
  sb_fill (body, 0x33, 32);      /* legacy_session_id */
  sb_be16 (body, 8);
  sb_be16 (body, 0x1302);
  sb_be16 (body, 0x1303);
  sb_be16 (body, 0x1301);
  sb_be16 (body, 0xc02c);
  sb_u8 (body, 1);
  sb_u8 (body, 0);
  sb_be16 (body, (guint16) ext->len);
  sb_raw (body, ext->data, ext->len);

  sb_u8 (msg, 1);                /* client_hello */
  sb_be24 (msg, body->len);
  sb_raw (msg, body->data, body->len);
  g_byte_array_unref (ext);
  g_byte_array_unref (body);
  return msg;
}

/* @msg in handshake records of at most @fragment bytes each. */
static inline GByteArray *
sb_in_records (GByteArray *msg, gsize fragment)
{
  GByteArray *out = g_byte_array_new ();

  for (gsize at = 0; at < msg->len; at += fragment)
    {
      gsize n = MIN (fragment, msg->len - at);

      sb_u8 (out, 22);
      sb_be16 (out, 0x0301);
      sb_be16 (out, (guint16) n);
      sb_raw (out, msg->data + at, n);
    }
  g_byte_array_unref (msg);
  return out;
}

/* A record of @kind at @time_us (its start and end) for @address (text of
 * @family) and @port, from the guest's @client_port: no DNS answers and no
 * bytes yet.  Free with airlock_sinkhole_record_free(). */
static inline AirlockSinkholeRecord *
sb_record_new (AirlockSinkholeRecordKind kind, gint64 time_us, int family, const char *address,
               guint16 port, guint16 client_port)
{
  AirlockSinkholeRecord *r = g_new0 (AirlockSinkholeRecord, 1);

  r->kind = kind;
  r->time_us = r->end_us = time_us;
  r->family = family;
  r->address_text = g_strdup (address);
  g_assert_cmpint (inet_pton (family, address, r->address), ==, 1);
  r->port = port;
  r->client_port = client_port;
  r->dns.answers = g_ptr_array_new_with_free_func (g_free);
  r->client_bytes = g_bytes_new (NULL, 0);
  r->server_bytes = g_bytes_new (NULL, 0);
  return r;
}
