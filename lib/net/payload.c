/* Names in a TCP connection's first client payload: the SNI of a TLS
 * ClientHello and the Host header of an HTTP/1.x request (see
 * net-private.h).
 *
 * The guest wrote these bytes.  Every length is checked against the bytes
 * present before it is used, the handshake message is bounded by what one
 * first payload may hold, and names are escaped before they leave. */
#include "config.h"

#include "net-private.h"
#include "evidence/frame-private.h"

#include <string.h>

#define TLS_RECORD_HEADER 5
#define TLS_CONTENT_HANDSHAKE 22
#define TLS_HANDSHAKE_CLIENT_HELLO 1
#define TLS_EXTENSION_SERVER_NAME 0
#define TLS_SERVER_NAME_HOST 0
/* RFC 8446 §5.1: a record's plaintext is at most 2^14 bytes (some stacks
 * send a little more; nobody sends a ClientHello record larger). */
#define TLS_RECORD_MAX (16384 + 2048)

static guint16
get_be16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

/* A reader over one buffer: every take checks the bytes left. */
typedef struct {
  const guint8 *p;
  gsize left;
} Cursor;

static gboolean
take (Cursor *c, gsize n, const guint8 **ret)
{
  if (c->left < n)
    return FALSE;
  if (ret != NULL)
    *ret = c->p;
  c->p += n;
  c->left -= n;
  return TRUE;
}

static gboolean
take_u8 (Cursor *c, gsize *ret)
{
  const guint8 *p;

  if (!take (c, 1, &p))
    return FALSE;
  *ret = p[0];
  return TRUE;
}

static gboolean
take_u16 (Cursor *c, gsize *ret)
{
  const guint8 *p;

  if (!take (c, 2, &p))
    return FALSE;
  *ret = get_be16 (p);
  return TRUE;
}

/* The body of a complete ClientHello.  A body that does not parse has no
 * name: the result is NONE, whatever follows. */
static NetPayloadResult
client_hello_sni (const guint8 *body, gsize len, char **ret_name)
{
  Cursor c = { body, len };
  gsize n, extensions_len;
  Cursor ext;

  /* legacy_version, random */
  if (!take (&c, 2 + 32, NULL))
    return NET_PAYLOAD_NONE;
  /* legacy_session_id, cipher_suites, legacy_compression_methods */
  if (!take_u8 (&c, &n) || !take (&c, n, NULL))
    return NET_PAYLOAD_NONE;
  if (!take_u16 (&c, &n) || !take (&c, n, NULL))
    return NET_PAYLOAD_NONE;
  if (!take_u8 (&c, &n) || !take (&c, n, NULL))
    return NET_PAYLOAD_NONE;
  if (!take_u16 (&c, &extensions_len) || extensions_len > c.left)
    return NET_PAYLOAD_NONE;

  ext.p = c.p;
  ext.left = extensions_len;
  while (ext.left > 0)
    {
      gsize type, ext_len, list_len;
      Cursor data, list;

      if (!take_u16 (&ext, &type) || !take_u16 (&ext, &ext_len) || !take (&ext, ext_len, &data.p))
        return NET_PAYLOAD_NONE;
      data.left = ext_len;
      if (type != TLS_EXTENSION_SERVER_NAME)
        continue;

      /* RFC 6066 §3: a list of (name_type, name); the first host_name. */
      if (!take_u16 (&data, &list_len) || !take (&data, list_len, &list.p))
        return NET_PAYLOAD_NONE;
      list.left = list_len;
      while (list.left > 0)
        {
          gsize name_type, name_len;
          const guint8 *name;

          if (!take_u8 (&list, &name_type) || !take_u16 (&list, &name_len)
              || !take (&list, name_len, &name))
            return NET_PAYLOAD_NONE;
          if (name_type == TLS_SERVER_NAME_HOST)
            {
              *ret_name = airlock_evidence_escape_bytes (name, name_len);
              return NET_PAYLOAD_FOUND;
            }
        }
      return NET_PAYLOAD_NONE;
    }
  return NET_PAYLOAD_NONE;
}

NetPayloadResult
net_tls_client_hello_sni (const guint8 *data, gsize len, char **ret_name)
{
  /* The handshake message may be split over several records (RFC 8446
   * §5.1): their fragments are joined here, at most one first payload's
   * worth. */
  g_autoptr (GByteArray) handshake = g_byte_array_new ();
  gsize offset = 0;

  g_return_val_if_fail (ret_name != NULL, NET_PAYLOAD_NONE);

  while (TRUE)
    {
      gsize record_len;

      if (handshake->len >= 4)
        {
          gsize message_len = ((gsize) handshake->data[1] << 16)
                              | ((gsize) handshake->data[2] << 8) | handshake->data[3];

          if (handshake->data[0] != TLS_HANDSHAKE_CLIENT_HELLO
              || message_len > AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX)
            return NET_PAYLOAD_NONE;
          if (handshake->len - 4 >= message_len)
            return client_hello_sni (handshake->data + 4, message_len, ret_name);
        }

      /* The next record: content type, legacy version 3.x, length. */
      if (len - offset < 1)
        return NET_PAYLOAD_NEED_MORE;
      if (data[offset] != TLS_CONTENT_HANDSHAKE)
        return NET_PAYLOAD_NONE;
      if (len - offset < 2)
        return NET_PAYLOAD_NEED_MORE;
      if (data[offset + 1] != 3)
        return NET_PAYLOAD_NONE;
      if (len - offset < TLS_RECORD_HEADER)
        return NET_PAYLOAD_NEED_MORE;
      record_len = get_be16 (data + offset + 3);
      if (record_len == 0 || record_len > TLS_RECORD_MAX)
        return NET_PAYLOAD_NONE;
      if (len - offset - TLS_RECORD_HEADER < record_len)
        {
          /* Parse what the record holds so far: the ClientHello is often
           * complete long before a clipped record is. */
          gsize present = len - offset - TLS_RECORD_HEADER;
          g_autoptr (GByteArray) partial = g_byte_array_new ();
          gsize message_len;

          g_byte_array_append (partial, handshake->data, handshake->len);
          g_byte_array_append (partial, data + offset + TLS_RECORD_HEADER, (guint) present);
          if (partial->len < 4)
            return NET_PAYLOAD_NEED_MORE;
          message_len = ((gsize) partial->data[1] << 16) | ((gsize) partial->data[2] << 8)
                        | partial->data[3];
          if (partial->data[0] != TLS_HANDSHAKE_CLIENT_HELLO
              || message_len > AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX)
            return NET_PAYLOAD_NONE;
          if (partial->len - 4 >= message_len)
            return client_hello_sni (partial->data + 4, message_len, ret_name);
          return NET_PAYLOAD_NEED_MORE;
        }
      /* Bounded: the check at the top of the loop stopped unless the
       * message (at most the first-payload cap) is still incomplete. */
      g_byte_array_append (handshake, data + offset + TLS_RECORD_HEADER, (guint) record_len);
      offset += TLS_RECORD_HEADER + record_len;
    }
}

/* RFC 9110 §9.3 methods and the WebDAV ones a client library may send. */
static const char *const http_methods[] = {
  "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
  "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK",
};

/* Whether @data starts with a method and a space: NEED_MORE while it
 * could. */
static NetPayloadResult
http_starts_with_method (const guint8 *data, gsize len)
{
  gboolean could = FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (http_methods); i++)
    {
      gsize m = strlen (http_methods[i]);

      if (len >= m + 1)
        {
          if (memcmp (data, http_methods[i], m) == 0 && data[m] == ' ')
            return NET_PAYLOAD_FOUND;
        }
      else if (memcmp (data, http_methods[i], MIN (len, m)) == 0)
        could = TRUE;
    }
  return could ? NET_PAYLOAD_NEED_MORE : NET_PAYLOAD_NONE;
}

static gboolean
is_blank (guint8 c)
{
  return c == ' ' || c == '\t';
}

NetPayloadResult
net_http_request_host (const guint8 *data, gsize len, char **ret_host)
{
  NetPayloadResult start;
  gsize line = 0;
  gboolean request_line = TRUE;

  g_return_val_if_fail (ret_host != NULL, NET_PAYLOAD_NONE);

  if (len == 0)
    return NET_PAYLOAD_NEED_MORE;
  start = http_starts_with_method (data, len);
  if (start != NET_PAYLOAD_FOUND)
    return start;

  /* Lines end in LF (CRLF, or a bare LF as lenient servers accept); the
   * head ends at an empty line. */
  while (line < len)
    {
      const guint8 *eol = memchr (data + line, '\n', len - line);
      gsize end, value;

      if (eol == NULL)
        return NET_PAYLOAD_NEED_MORE;
      end = (gsize) (eol - data);
      if (end > line && data[end - 1] == '\r')
        end--;
      if (end == line && !request_line)
        return NET_PAYLOAD_NONE;

      if (!request_line && end - line >= 5 && g_ascii_strncasecmp ((const char *) data + line,
                                                                   "host:", 5) == 0)
        {
          value = line + 5;
          while (value < end && is_blank (data[value]))
            value++;
          while (end > value && is_blank (data[end - 1]))
            end--;
          *ret_host = airlock_evidence_escape_bytes (data + value, end - value);
          return NET_PAYLOAD_FOUND;
        }
      request_line = FALSE;
      line = (gsize) (eol - data) + 1;
    }
  return NET_PAYLOAD_NEED_MORE;
}
