/* What a TCP connection's first client payload says: a TLS ClientHello
 * (SNI, ALPN, versions) and an HTTP/1.x request head (request line, Host,
 * User-Agent); see net-private.h.  The capture's flows take the names,
 * the sinkhole's protocol detection all of it.
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
#define TLS_EXTENSION_ALPN 16
#define TLS_EXTENSION_SUPPORTED_VERSIONS 43
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

/* A server's GREASE values (RFC 8701): 0x0a0a, 0x1a1a, … 0xfafa, offered
 * to keep servers tolerant, never a version anyone speaks. */
static gboolean
is_grease (gsize value)
{
  return (value & 0x0f0f) == 0x0a0a && (value >> 12) == ((value >> 4) & 0x0f);
}

/* The extensions of a ClientHello, in order; the first of each kind
 * counts.  FALSE at the first one that does not parse. */
static gboolean
client_hello_extensions (Cursor *ext, NetTlsClientHello *hello)
{
  gboolean seen_server_name = FALSE, seen_alpn = FALSE, seen_versions = FALSE;

  while (ext->left > 0)
    {
      gsize type, ext_len, list_len;
      Cursor data, list;

      if (!take_u16 (ext, &type) || !take_u16 (ext, &ext_len) || !take (ext, ext_len, &data.p))
        return FALSE;
      data.left = ext_len;

      if (type == TLS_EXTENSION_SERVER_NAME && !seen_server_name)
        {
          /* RFC 6066 §3: a list of (name_type, name); the first host_name. */
          seen_server_name = TRUE;
          if (!take_u16 (&data, &list_len) || !take (&data, list_len, &list.p))
            return FALSE;
          list.left = list_len;
          while (list.left > 0)
            {
              gsize name_type, name_len;
              const guint8 *name;

              if (!take_u8 (&list, &name_type) || !take_u16 (&list, &name_len)
                  || !take (&list, name_len, &name))
                return FALSE;
              if (name_type == TLS_SERVER_NAME_HOST)
                {
                  hello->sni = airlock_evidence_escape_bytes (name, name_len);
                  break;
                }
            }
        }
      else if (type == TLS_EXTENSION_ALPN && !seen_alpn)
        {
          /* RFC 7301 §3.1: a list of non-empty protocol names. */
          seen_alpn = TRUE;
          hello->alpn = g_ptr_array_new_with_free_func (g_free);
          if (!take_u16 (&data, &list_len) || !take (&data, list_len, &list.p))
            return FALSE;
          list.left = list_len;
          while (list.left > 0)
            {
              gsize name_len;
              const guint8 *name;

              if (!take_u8 (&list, &name_len) || name_len == 0 || !take (&list, name_len, &name))
                return FALSE;
              g_ptr_array_add (hello->alpn, airlock_evidence_escape_bytes (name, name_len));
            }
        }
      else if (type == TLS_EXTENSION_SUPPORTED_VERSIONS && !seen_versions)
        {
          /* RFC 8446 §4.2.1: a list of 2-byte versions (a ClientHello's). */
          seen_versions = TRUE;
          if (!take_u8 (&data, &list_len) || list_len % 2 != 0 || !take (&data, list_len, &list.p))
            return FALSE;
          list.left = list_len;
          while (list.left > 0)
            {
              gsize version;

              if (!take_u16 (&list, &version))
                break;
              if (!is_grease (version) && version > hello->highest_supported_version)
                hello->highest_supported_version = (guint16) version;
            }
        }
    }
  return TRUE;
}

/* The body of a complete ClientHello, as far as it parses (@hello's
 * malformed says where it stopped). */
static void
client_hello_parse_body (const guint8 *body, gsize len, NetTlsClientHello *hello)
{
  Cursor c = { body, len };
  gsize n, extensions_len;
  Cursor ext;

  /* legacy_version, random */
  if (!take_u16 (&c, &n))
    goto malformed;
  hello->legacy_version = (guint16) n;
  if (!take (&c, 32, NULL))
    goto malformed;
  /* legacy_session_id, cipher_suites, legacy_compression_methods */
  if (!take_u8 (&c, &n) || !take (&c, n, NULL))
    goto malformed;
  if (!take_u16 (&c, &n) || !take (&c, n, NULL))
    goto malformed;
  if (!take_u8 (&c, &n) || !take (&c, n, NULL))
    goto malformed;
  /* A ClientHello without extensions (SSL 3.0 style) ends here. */
  if (c.left == 0)
    return;
  if (!take_u16 (&c, &extensions_len) || extensions_len > c.left)
    goto malformed;

  ext.p = c.p;
  ext.left = extensions_len;
  if (client_hello_extensions (&ext, hello))
    return;
malformed:
  hello->malformed = TRUE;
}

void
net_tls_client_hello_clear (NetTlsClientHello *hello)
{
  if (!hello)
    return;
  g_free (hello->sni);
  g_clear_pointer (&hello->alpn, g_ptr_array_unref);
  memset (hello, 0, sizeof *hello);
}

/* Whether @handshake (the fragments joined so far) holds the whole
 * ClientHello: FOUND parses it into @hello, NONE when it is no
 * ClientHello, NEED_MORE while it is incomplete. */
static NetPayloadResult
client_hello_message (const GByteArray *handshake, NetTlsClientHello *hello)
{
  gsize message_len;

  if (handshake->len < 4)
    return NET_PAYLOAD_NEED_MORE;
  message_len = ((gsize) handshake->data[1] << 16) | ((gsize) handshake->data[2] << 8)
                | handshake->data[3];
  if (handshake->data[0] != TLS_HANDSHAKE_CLIENT_HELLO
      || message_len > AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX)
    return NET_PAYLOAD_NONE;
  if (handshake->len - 4 < message_len)
    return NET_PAYLOAD_NEED_MORE;
  client_hello_parse_body (handshake->data + 4, message_len, hello);
  return NET_PAYLOAD_FOUND;
}

NetPayloadResult
net_tls_client_hello_parse (const guint8 *data, gsize len, NetTlsClientHello *ret_hello)
{
  /* The handshake message may be split over several records (RFC 8446
   * §5.1): their fragments are joined here, at most one first payload's
   * worth. */
  g_autoptr (GByteArray) handshake = g_byte_array_new ();
  gsize offset = 0;

  g_return_val_if_fail (ret_hello != NULL, NET_PAYLOAD_NONE);

  memset (ret_hello, 0, sizeof *ret_hello);
  while (TRUE)
    {
      NetPayloadResult result;
      gsize record_len, present;

      if (handshake->len >= 4)
        {
          result = client_hello_message (handshake, ret_hello);
          if (result != NET_PAYLOAD_NEED_MORE)
            return result;
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
      present = MIN (record_len, len - offset - TLS_RECORD_HEADER);
      /* Bounded: the check at the top of the loop stopped unless the
       * message (at most the first-payload cap) is still incomplete. */
      g_byte_array_append (handshake, data + offset + TLS_RECORD_HEADER, (guint) present);
      if (present < record_len)
        {
          /* Parse what the record holds so far: the ClientHello is often
           * complete long before a clipped record is. */
          return client_hello_message (handshake, ret_hello);
        }
      offset += TLS_RECORD_HEADER + record_len;
    }
}

NetPayloadResult
net_tls_client_hello_sni (const guint8 *data, gsize len, char **ret_name)
{
  NetTlsClientHello hello;
  NetPayloadResult result;

  g_return_val_if_fail (ret_name != NULL, NET_PAYLOAD_NONE);

  result = net_tls_client_hello_parse (data, len, &hello);
  if (result == NET_PAYLOAD_FOUND)
    {
      if (hello.sni)
        *ret_name = g_steal_pointer (&hello.sni);
      else
        result = NET_PAYLOAD_NONE;
    }
  net_tls_client_hello_clear (&hello);
  return result;
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

void
net_http_request_clear (NetHttpRequest *request)
{
  if (!request)
    return;
  g_free (request->method);
  g_free (request->path);
  g_free (request->version);
  g_free (request->host);
  g_free (request->user_agent);
  memset (request, 0, sizeof *request);
}

/* The value of the header line [@line, @end) when its name is @name
 * (with its colon, compared without regard to ASCII case), surrounding
 * blanks removed, escaped; NULL otherwise. */
static char *
header_value (const guint8 *data, gsize line, gsize end, const char *name)
{
  gsize name_len = strlen (name);
  gsize value;

  if (end - line < name_len || g_ascii_strncasecmp ((const char *) data + line, name, name_len) != 0)
    return NULL;
  value = line + name_len;
  while (value < end && is_blank (data[value]))
    value++;
  while (end > value && is_blank (data[end - 1]))
    end--;
  return airlock_evidence_escape_bytes (data + value, end - value);
}

/* The request line [0, @end): the method (known to be one of
 * http_methods, followed by a space), then the target up to the next
 * space, then the version. */
static void
request_line (const guint8 *data, gsize end, NetHttpRequest *request)
{
  const guint8 *space = memchr (data, ' ', end);
  const guint8 *second;
  gsize target, target_end;

  if (!space)
    return;
  target = (gsize) (space - data) + 1;
  second = memchr (data + target, ' ', end - target);
  target_end = second ? (gsize) (second - data) : end;
  if (target_end > target)
    request->path = airlock_evidence_escape_bytes (data + target, target_end - target);
  if (second && end > target_end + 1)
    request->version = airlock_evidence_escape_bytes (data + target_end + 1, end - target_end - 1);
}

NetPayloadResult
net_http_request_head (const guint8 *data, gsize len, NetHttpRequest *ret_request)
{
  NetPayloadResult start;
  gsize line = 0;

  g_return_val_if_fail (ret_request != NULL, NET_PAYLOAD_NONE);

  memset (ret_request, 0, sizeof *ret_request);
  if (len == 0)
    return NET_PAYLOAD_NEED_MORE;
  start = http_starts_with_method (data, len);
  if (start != NET_PAYLOAD_FOUND)
    return start;
  ret_request->method = g_strndup ((const char *) data,
                                   (gsize) ((const guint8 *) memchr (data, ' ', len) - data));

  /* Lines end in LF (CRLF, or a bare LF as lenient servers accept); the
   * head ends at an empty line. */
  while (line < len)
    {
      const guint8 *eol = memchr (data + line, '\n', len - line);
      gsize end;

      if (eol == NULL)
        return NET_PAYLOAD_NEED_MORE;
      end = (gsize) (eol - data);
      if (end > line && data[end - 1] == '\r')
        end--;
      if (line == 0)
        request_line (data, end, ret_request);
      else if (end == line)
        return NET_PAYLOAD_FOUND;
      else if (!ret_request->host)
        ret_request->host = header_value (data, line, end, "host:");
      if (line > 0 && !ret_request->user_agent)
        ret_request->user_agent = header_value (data, line, end, "user-agent:");
      line = (gsize) (eol - data) + 1;
    }
  return NET_PAYLOAD_NEED_MORE;
}

NetPayloadResult
net_http_request_host (const guint8 *data, gsize len, char **ret_host)
{
  NetHttpRequest request;
  NetPayloadResult result;

  g_return_val_if_fail (ret_host != NULL, NET_PAYLOAD_NONE);

  /* A Host line is the answer as soon as it is whole, head ended or not. */
  result = net_http_request_head (data, len, &request);
  if (request.host)
    {
      *ret_host = g_steal_pointer (&request.host);
      result = NET_PAYLOAD_FOUND;
    }
  else if (result == NET_PAYLOAD_FOUND)
    result = NET_PAYLOAD_NONE;
  net_http_request_clear (&request);
  return result;
}
