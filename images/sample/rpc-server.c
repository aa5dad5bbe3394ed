/* rpc-server: the `rpc` sample image's entrypoint.  A JSON-RPC 2.0 server
 * on stdio, one message per line, the way an MCP stdio server talks to its
 * client; as built it never touches the network, so a run of this image
 * must record no attempt at all however long the conversation (the
 * update-check mode below is the exception, asked for explicitly).
 *
 *   initialize                 {"protocolVersion":"2024-11-05","serverInfo":{…},
 *                               "capabilities":{"tools":{}}}
 *   notifications/initialized  (a notification: no reply)
 *   ping                       {}
 *   tools/list                 the tools below, with their input schemas
 *   tools/call                 {"name":"add","arguments":{"a":2,"b":3}}
 *                                → {"content":[{"type":"text","text":"5"}]}
 *                              {"name":"echo","arguments":{"text":"hi"}}
 *                                → {"content":[{"type":"text","text":"hi"}]}
 *   shutdown                   {}, then exit 0
 *
 * Errors are JSON-RPC's: -32700 for a line that is not JSON (or longer than
 * MAX_LINE), -32600 for JSON that is not a request, -32601 for an unknown
 * method, -32602 for missing or wrong params (an unknown tool too, as MCP
 * says).  A message without an "id" is a notification and never gets a
 * reply, not even an error (JSON-RPC 2.0, section 4.1).  EOF on stdin ends
 * the program with status 0.
 *
 * The JSON reader is a validating scanner over the line, not a tree: every
 * line is checked against the grammar as a whole before any member is
 * looked at, nesting is bounded by MAX_DEPTH and lines by MAX_LINE, so no
 * input (a test's, or a fuzzer's) can make it crash, recurse without end or
 * allocate without bound.  Static C, no GLib (guest code).
 *
 * Update-check mode (`--update-check`, or RPC_UPDATE_CHECK=1 in the
 * environment): what many MCP servers do on their first `initialize`, a
 * check for a newer release of themselves, the case airlock's sinkhole
 * (issue 20) exists for.  Before answering the first initialize it
 * resolves pypi.org (A, over UDP to /etc/resolv.conf's nameserver), sends
 * a TLS 1.3 ClientHello with SNI pypi.org to port 443 (no TLS library
 * here: the hello is the evidence, and nothing answers it with a
 * certificate anyway), then falls back to plain HTTP, as old updaters do:
 * GET /pypi/airlock-rpc-sample/json with Host pypi.org on port 80.  An
 * HTTP 200 whose body is a JSON object with info.version is read and the
 * version printed; either way the server goes on to answer.  Every step is
 * a line on stderr (stdout is the protocol's); every wait is bounded
 * (netclient.h: 2 s), so a network that never answers delays the first
 * answer by a few seconds at most.  Off by default: the image as built
 * makes no network call at all. */

#include "netclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Longer lines are answered with -32700 and skipped to their end: the
 * buffer is fixed, so a client that never sends '\n' costs no memory. */
#define MAX_LINE 65536
#define MAX_LINE_TEXT "65536"
/* Deep enough for any real request, shallow enough that the recursion of
 * scan_value() stays a few KiB of stack. */
#define MAX_DEPTH 32

#define PROTOCOL_VERSION "2024-11-05"

#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602

/* One JSON value's text in the line: [start, end). */
typedef struct {
  const char *start;
  const char *end;
} json_span;

/* ---- scanning: each returns the position after what it read, or NULL
 * when the text there is not what the grammar allows */

static const char *
skip_ws (const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

static int
hex_digit (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Four hex digits at @p into @ret; -1 when they are not. */
static int
read_hex4 (const char *p, const char *end, unsigned *ret)
{
  unsigned v = 0;

  if (end - p < 4)
    return -1;
  for (int i = 0; i < 4; i++)
    {
      int d = hex_digit (p[i]);

      if (d < 0)
        return -1;
      v = v * 16 + (unsigned) d;
    }
  *ret = v;
  return 0;
}

/* @p is at '"'. */
static const char *
scan_string (const char *p, const char *end)
{
  unsigned cp;

  for (p++; p < end; p++)
    {
      unsigned char c = (unsigned char) *p;

      if (c == '"')
        return p + 1;
      /* Raw control characters (a NUL among them) are not JSON. */
      if (c < 0x20)
        return NULL;
      if (c != '\\')
        continue;
      if (++p >= end)
        return NULL;
      switch (*p)
        {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          break;
        case 'u':
          if (read_hex4 (p + 1, end, &cp) < 0)
            return NULL;
          p += 4;
          break;
        default:
          return NULL;
        }
    }
  return NULL;
}

static const char *
scan_digits (const char *p, const char *end)
{
  const char *start = p;

  while (p < end && *p >= '0' && *p <= '9')
    p++;
  return p > start ? p : NULL;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *
scan_number (const char *p, const char *end)
{
  if (p < end && *p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else if (!(p = scan_digits (p, end)))
    return NULL;
  if (p < end && *p == '.' && !(p = scan_digits (p + 1, end)))
    return NULL;
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      p++;
      if (p < end && (*p == '+' || *p == '-'))
        p++;
      if (!(p = scan_digits (p, end)))
        return NULL;
    }
  return p;
}

static const char *
scan_literal (const char *p, const char *end, const char *word)
{
  size_t len = strlen (word);

  if ((size_t) (end - p) < len || memcmp (p, word, len) != 0)
    return NULL;
  return p + len;
}

/* One value at @p (no leading whitespace), nested at most MAX_DEPTH. */
static const char *
scan_value (const char *p, const char *end, int depth)
{
  if (p >= end)
    return NULL;
  switch (*p)
    {
    case '{':
    case '[':
      {
        char close = *p == '{' ? '}' : ']';
        bool object = *p == '{';

        if (depth >= MAX_DEPTH)
          return NULL;
        p = skip_ws (p + 1, end);
        if (p < end && *p == close)
          return p + 1;
        for (;;)
          {
            if (object)
              {
                if (p >= end || *p != '"' || !(p = scan_string (p, end)))
                  return NULL;
                p = skip_ws (p, end);
                if (p >= end || *p != ':')
                  return NULL;
                p = skip_ws (p + 1, end);
              }
            if (!(p = scan_value (p, end, depth + 1)))
              return NULL;
            p = skip_ws (p, end);
            if (p < end && *p == close)
              return p + 1;
            if (p >= end || *p != ',')
              return NULL;
            p = skip_ws (p + 1, end);
          }
      }
    case '"':
      return scan_string (p, end);
    case 't':
      return scan_literal (p, end, "true");
    case 'f':
      return scan_literal (p, end, "false");
    case 'n':
      return scan_literal (p, end, "null");
    default:
      return scan_number (p, end);
    }
}

/* ---- reading values the scanner has already accepted */

static bool
span_is (json_span v, char first)
{
  return v.start && v.start < v.end && *v.start == first;
}

static bool
span_is_number (json_span v)
{
  return v.start && v.start < v.end && (*v.start == '-' || (*v.start >= '0' && *v.start <= '9'));
}

static void
put_utf8 (char **out, unsigned cp)
{
  char *o = *out;

  if (cp < 0x80)
    *o++ = (char) cp;
  else if (cp < 0x800)
    {
      *o++ = (char) (0xc0 | (cp >> 6));
      *o++ = (char) (0x80 | (cp & 0x3f));
    }
  else if (cp < 0x10000)
    {
      *o++ = (char) (0xe0 | (cp >> 12));
      *o++ = (char) (0x80 | ((cp >> 6) & 0x3f));
      *o++ = (char) (0x80 | (cp & 0x3f));
    }
  else
    {
      *o++ = (char) (0xf0 | (cp >> 18));
      *o++ = (char) (0x80 | ((cp >> 12) & 0x3f));
      *o++ = (char) (0x80 | ((cp >> 6) & 0x3f));
      *o++ = (char) (0x80 | (cp & 0x3f));
    }
  *out = o;
}

/* The string @v (a scanned JSON string) unescaped into @out, which has
 * room for @cap bytes; its length, or -1 when it does not fit.  The text
 * is never longer than the escaped form (an escape of n bytes stands for
 * at most n - 2), so a buffer of the span's length always suffices.  A
 * lone surrogate becomes U+FFFD: the text is echoed back, and must then
 * still be UTF-8. */
static long
decode_string (json_span v, char *out, size_t cap)
{
  const char *p = v.start + 1, *end = v.end - 1;
  char *o = out;

  if ((size_t) (v.end - v.start) > cap)
    return -1;
  while (p < end)
    {
      unsigned cp, low;

      if (*p != '\\')
        {
          *o++ = *p++;
          continue;
        }
      p++;
      switch (*p++)
        {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
          read_hex4 (p, end, &cp);
          p += 4;
          if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u'
              && read_hex4 (p + 2, end, &low) == 0 && low >= 0xdc00 && low < 0xe000)
            {
              cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
              p += 6;
            }
          else if (cp >= 0xd800 && cp < 0xe000)
            cp = 0xfffd;
          put_utf8 (&o, cp);
          break;
        default: /* '"', '\\', '/' */
          *o++ = p[-1];
          break;
        }
    }
  return o - out;
}

/* Whether the string @v is exactly @s (escapes decoded). */
static bool
string_equals (json_span v, const char *s)
{
  char buf[64];
  long len;

  if (!span_is (v, '"'))
    return false;
  len = decode_string (v, buf, sizeof buf);
  return len >= 0 && (size_t) len == strlen (s) && memcmp (buf, s, (size_t) len) == 0;
}

/* The member @key of the object @obj into @ret; false when @obj is not an
 * object or has no such member.  With duplicate keys the last one counts,
 * as in most JSON parsers (json-glib's among them), so the client's library
 * and this server read the same request. */
static bool
object_get (json_span obj, const char *key, json_span *ret)
{
  const char *p, *end = obj.end;
  bool found = false;

  if (!span_is (obj, '{'))
    return false;
  p = skip_ws (obj.start + 1, end);
  while (p < end && *p == '"')
    {
      json_span name, value;

      name.start = p;
      name.end = p = scan_string (p, end);
      p = skip_ws (p, end) + 1; /* ':' */
      value.start = p = skip_ws (p, end);
      value.end = p = scan_value (p, end, 0);
      if (string_equals (name, key))
        {
          *ret = value;
          found = true;
        }
      p = skip_ws (p, end);
      if (*p == ',')
        p = skip_ws (p + 1, end);
    }
  return found;
}

/* An integer (no fraction, no exponent) that fits int64_t into @ret. */
static bool
read_int64 (json_span v, int64_t *ret)
{
  const char *p = v.start;
  bool negative = false;
  uint64_t magnitude = 0;

  if (!span_is_number (v))
    return false;
  if (*p == '-')
    {
      negative = true;
      p++;
    }
  for (; p < v.end; p++)
    {
      if (*p < '0' || *p > '9')
        return false; /* '.', 'e', 'E': not an integer */
      if (magnitude > (UINT64_MAX - 9) / 10)
        return false;
      magnitude = magnitude * 10 + (uint64_t) (*p - '0');
    }
  if (magnitude > (uint64_t) INT64_MAX + negative)
    return false;
  *ret = negative ? (int64_t) (0 - magnitude) : (int64_t) magnitude;
  return true;
}

/* ---- writing */

/* Writes @len bytes of @s as a JSON string (with quotes); bytes >= 0x80
 * pass through, so UTF-8 stays UTF-8. */
static void
put_json_string (const char *s, size_t len)
{
  putchar ('"');
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) s[i];

      if (c == '"' || c == '\\')
        printf ("\\%c", c);
      else if (c == '\n')
        fputs ("\\n", stdout);
      else if (c == '\t')
        fputs ("\\t", stdout);
      else if (c < 0x20 || c == 0x7f)
        printf ("\\u%04x", c);
      else
        putchar (c);
    }
  putchar ('"');
}

/* What a request comes to: an error, a fixed result, or a tool's text. */
typedef struct {
  int error_code;            /* 0: a result */
  const char *error_message;
  const char *result;        /* JSON text, or NULL for a tool result */
  const char *text;          /* the tool's output */
  size_t text_len;
  bool exit_after;           /* shutdown */
} outcome;

static outcome
fail (int code, const char *message)
{
  outcome o = { 0 };

  o.error_code = code;
  o.error_message = message;
  return o;
}

static outcome
succeed (const char *result)
{
  outcome o = { 0 };

  o.result = result;
  return o;
}

/* @id is the request's "id" as sent (the scanner accepted it, so it is
 * valid JSON), or NULL for null: an error about a request whose id could
 * not be read goes to id null (JSON-RPC 2.0, section 5). */
static void
reply (const json_span *id, const outcome *o)
{
  fputs ("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
  if (id)
    fwrite (id->start, 1, (size_t) (id->end - id->start), stdout);
  else
    fputs ("null", stdout);
  if (o->error_code)
    {
      printf (",\"error\":{\"code\":%d,\"message\":", o->error_code);
      put_json_string (o->error_message, strlen (o->error_message));
      putchar ('}');
    }
  else if (o->result)
    printf (",\"result\":%s", o->result);
  else
    {
      fputs (",\"result\":{\"content\":[{\"type\":\"text\",\"text\":", stdout);
      put_json_string (o->text, o->text_len);
      fputs ("}]}", stdout);
    }
  fputs ("}\n", stdout);
  /* A line protocol: the answer must leave now, not when a buffer fills. */
  fflush (stdout);
}

/* ---- the methods */

static const char initialize_result[] =
  "{\"protocolVersion\":\"" PROTOCOL_VERSION "\","
  "\"serverInfo\":{\"name\":\"airlock-rpc-sample\",\"version\":\"1\"},"
  "\"capabilities\":{\"tools\":{}}}";

static const char tools_list_result[] =
  "{\"tools\":["
  "{\"name\":\"add\",\"description\":\"Adds two integers.\","
  "\"inputSchema\":{\"type\":\"object\","
  "\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"
  "\"required\":[\"a\",\"b\"]}},"
  "{\"name\":\"echo\",\"description\":\"Returns its text.\","
  "\"inputSchema\":{\"type\":\"object\","
  "\"properties\":{\"text\":{\"type\":\"string\"}},"
  "\"required\":[\"text\"]}}"
  "]}";

/* The tool's text output: a number or the echoed text (which is never
 * longer than the line it came in). */
static char text_buffer[MAX_LINE];

static outcome
tool_add (json_span arguments)
{
  json_span a, b;
  int64_t x, y, sum;
  outcome o = { 0 };

  if (!object_get (arguments, "a", &a) || !object_get (arguments, "b", &b))
    return fail (RPC_INVALID_PARAMS, "Invalid params: add needs arguments a and b");
  if (!read_int64 (a, &x) || !read_int64 (b, &y))
    return fail (RPC_INVALID_PARAMS, "Invalid params: a and b must be 64-bit integers");
  if (__builtin_add_overflow (x, y, &sum))
    return fail (RPC_INVALID_PARAMS, "Invalid params: a + b overflows a 64-bit integer");
  o.text = text_buffer;
  o.text_len = (size_t) snprintf (text_buffer, sizeof text_buffer, "%lld", (long long) sum);
  return o;
}

static outcome
tool_echo (json_span arguments)
{
  json_span text;
  long len;
  outcome o = { 0 };

  if (!object_get (arguments, "text", &text) || !span_is (text, '"'))
    return fail (RPC_INVALID_PARAMS, "Invalid params: echo needs a string argument text");
  len = decode_string (text, text_buffer, sizeof text_buffer);
  if (len < 0)
    return fail (RPC_INVALID_PARAMS, "Invalid params: text is too long");
  o.text = text_buffer;
  o.text_len = (size_t) len;
  return o;
}

static outcome
tools_call (const json_span *params)
{
  json_span name, arguments;

  if (!params || !span_is (*params, '{'))
    return fail (RPC_INVALID_PARAMS, "Invalid params: tools/call needs params {name, arguments}");
  if (!object_get (*params, "name", &name) || !span_is (name, '"'))
    return fail (RPC_INVALID_PARAMS, "Invalid params: tools/call needs a string name");
  if (!object_get (*params, "arguments", &arguments) || !span_is (arguments, '{'))
    return fail (RPC_INVALID_PARAMS, "Invalid params: tools/call needs an object arguments");
  if (string_equals (name, "add"))
    return tool_add (arguments);
  if (string_equals (name, "echo"))
    return tool_echo (arguments);
  /* MCP reports an unknown tool as invalid params, not as an unknown method. */
  return fail (RPC_INVALID_PARAMS, "Invalid params: unknown tool");
}

/* ---- the update check */

#define UPDATE_HOST "pypi.org"
#define UPDATE_PACKAGE "airlock-rpc-sample"
#define UPDATE_PATH "/pypi/" UPDATE_PACKAGE "/json"
#define UPDATE_USER_AGENT "airlock-rpc-sample/1"

static bool update_check_enabled;
static bool update_check_done;

static void __attribute__ ((format (printf, 1, 2)))
update_say (const char *fmt, ...)
{
  va_list ap;

  fputs ("rpc-server: update check: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  fflush (stderr);
}

static const char *
wait_error (long r)
{
  return r == -ETIMEDOUT ? "nothing within the wait" : strerror ((int) -r);
}

/* pypi.org's address into @ret (port 0); false when there is none. */
static bool
update_resolve (net_endpoint *ret)
{
  uint8_t query[512], reply[1500];
  const unsigned id = 0x7059;
  char text[INET6_ADDRSTRLEN];
  net_endpoint ns;
  dns_answer answer;
  long qlen, n;
  int r;

  find_nameserver (&ns);
  qlen = dns_build_query (query, sizeof query, UPDATE_HOST, DNS_TYPE_A, id);
  n = qlen < 0 ? qlen : dns_exchange_udp (&ns, query, (size_t) qlen, id, reply, sizeof reply);
  if (n < 0)
    {
      update_say ("no answer from %s for " UPDATE_HOST ": %s",
                  endpoint_address_text (&ns, text, sizeof text), wait_error (n));
      return false;
    }
  r = dns_parse_answer (reply, (size_t) n, id, DNS_TYPE_A, &answer);
  if (r < 0)
    {
      update_say (UPDATE_HOST " has no address (rcode %u)", answer.rcode);
      return false;
    }
  inet_ntop (AF_INET, answer.address, text, sizeof text);
  endpoint_from_text (ret, text, 0);
  update_say (UPDATE_HOST " is %s", text);
  return true;
}

/* A connection to @addr's address on @port; the socket or -1, said. */
static int
update_connect (const net_endpoint *addr, unsigned port)
{
  char text[INET6_ADDRSTRLEN];
  net_endpoint ep;
  int fd;

  endpoint_address_text (addr, text, sizeof text);
  endpoint_from_text (&ep, text, port);
  fd = connect_endpoint (&ep, SOCK_STREAM, NULL);
  if (fd < 0)
    {
      update_say ("connect %s port %u: %s", text, port, wait_error (fd));
      return -1;
    }
  update_say ("connected to %s port %u", text, port);
  return fd;
}

static void
update_try_https (const net_endpoint *addr)
{
  static const char *const alpn[] = { "h2", "http/1.1", NULL };
  uint8_t hello[1024], reply[4096];
  long len = tls_client_hello (hello, sizeof hello, UPDATE_HOST, alpn);
  long n;
  int fd = update_connect (addr, 443);

  if (fd < 0)
    return;
  if (len < 0 || send_all (fd, hello, (size_t) len) < 0)
    update_say ("https: the ClientHello could not be sent");
  else
    {
      update_say ("https: ClientHello sent, SNI " UPDATE_HOST);
      n = read_some (fd, reply, sizeof reply);
      if (n > 0)
        update_say ("https: answered: %s", tls_describe_reply (reply, (size_t) n));
      else
        update_say ("https: no answer: %s", n == 0 ? "closed" : wait_error (n));
    }
  /* This server speaks no TLS past its hello: whatever came back, the
   * check falls back to plain HTTP. */
  close (fd);
}

/* The version info.version of the JSON object @body names, into @out. */
static bool
read_latest_version (const uint8_t *body, size_t len, char *out, size_t size)
{
  const char *p = skip_ws ((const char *) body, (const char *) body + len);
  const char *end = (const char *) body + len;
  json_span doc, info, version;
  long n;

  doc.start = p;
  doc.end = scan_value (p, end, 0);
  if (!doc.end || skip_ws (doc.end, end) != end || !object_get (doc, "info", &info)
      || !object_get (info, "version", &version) || !span_is (version, '"'))
    return false;
  if ((size_t) (version.end - version.start) >= size)
    return false;
  n = decode_string (version, out, size - 1);
  if (n < 0)
    return false;
  out[n] = '\0';
  /* It is printed on a terminal: a version is printable ASCII. */
  for (long i = 0; i < n; i++)
    if (out[i] < 0x20 || out[i] >= 0x7f)
      return false;
  return true;
}

static void
update_try_http (const net_endpoint *addr)
{
  static const char request[] = "GET " UPDATE_PATH " HTTP/1.1\r\nHost: " UPDATE_HOST "\r\n"
                                "User-Agent: " UPDATE_USER_AGENT "\r\nAccept: application/json\r\n"
                                "Connection: close\r\n\r\n";
  static uint8_t response[16384];
  const uint8_t *body;
  size_t len, body_len;
  char version[64];
  int status, fd = update_connect (addr, 80);

  if (fd < 0)
    return;
  if (send_all (fd, request, sizeof request - 1) < 0)
    {
      update_say ("http: the request could not be sent");
      close (fd);
      return;
    }
  update_say ("http: GET " UPDATE_PATH " sent, Host " UPDATE_HOST);
  read_until_close (fd, response, sizeof response, &len);
  close (fd);
  status = http_status (response, len);
  if (status < 0)
    {
      update_say ("http: no HTTP response (%zu bytes)", len);
      return;
    }
  if (status != 200 || http_body (response, len, &body, &body_len) < 0)
    {
      update_say ("http: status %d: no release information", status);
      return;
    }
  if (!read_latest_version (body, body_len, version, sizeof version))
    {
      update_say ("http: status 200, but not JSON with info.version");
      return;
    }
  update_say ("the latest " UPDATE_PACKAGE " is %s (this is 1)", version);
}

/* Once, before the first initialize is answered. */
static void
update_check (void)
{
  net_endpoint addr;

  if (!update_check_enabled || update_check_done)
    return;
  update_check_done = true;
  if (!update_resolve (&addr))
    return;
  update_try_https (&addr);
  update_try_http (&addr);
}

static outcome
dispatch (json_span method, const json_span *params)
{
  json_span version;

  if (params && !span_is (*params, '{') && !span_is (*params, '['))
    return fail (RPC_INVALID_PARAMS, "Invalid params: params must be an object or an array");
  /* MCP's initialize carries the client's protocol version; the answer is
   * the one version this server speaks, which the client may refuse. */
  if (string_equals (method, "initialize"))
    {
      if (!params || !object_get (*params, "protocolVersion", &version)
          || !span_is (version, '"'))
        return fail (RPC_INVALID_PARAMS, "Invalid params: initialize needs a string protocolVersion");
      update_check ();
      return succeed (initialize_result);
    }
  if (string_equals (method, "notifications/initialized") || string_equals (method, "ping"))
    return succeed ("{}");
  if (string_equals (method, "tools/list"))
    return succeed (tools_list_result);
  if (string_equals (method, "tools/call"))
    return tools_call (params);
  if (string_equals (method, "shutdown"))
    {
      outcome o = succeed ("{}");

      o.exit_after = true;
      return o;
    }
  return fail (RPC_METHOD_NOT_FOUND, "Method not found");
}

/* One line of input; true when the server is to exit. */
static bool
handle_line (const char *line, size_t len)
{
  const char *end = line + len, *p = skip_ws (line, end);
  json_span message, id, method, params, version;
  bool has_id, has_params;
  outcome o;

  if (p == end)
    return false; /* a blank line between messages */
  message.start = p;
  message.end = scan_value (p, end, 0);
  if (!message.end || skip_ws (message.end, end) != end)
    {
      o = fail (RPC_PARSE_ERROR, "Parse error");
      reply (NULL, &o);
      return false;
    }
  /* A batch (an array) is valid JSON-RPC 2.0 but nothing MCP's stdio
   * transport needs here: it is refused as a whole. */
  if (!span_is (message, '{'))
    {
      o = fail (RPC_INVALID_REQUEST, "Invalid Request: not an object");
      reply (NULL, &o);
      return false;
    }
  has_id = object_get (message, "id", &id);
  if (has_id && !span_is (id, '"') && !span_is_number (id) && !span_is (id, 'n'))
    {
      o = fail (RPC_INVALID_REQUEST, "Invalid Request: id must be a string, a number or null");
      reply (NULL, &o);
      return false;
    }
  if (!object_get (message, "jsonrpc", &version) || !string_equals (version, "2.0")
      || !object_get (message, "method", &method) || !span_is (method, '"'))
    {
      /* Not a request at all, so not a notification either: answered,
       * to id null when it has none (JSON-RPC 2.0, section 5). */
      o = fail (RPC_INVALID_REQUEST, "Invalid Request: needs jsonrpc \"2.0\" and a string method");
      reply (has_id ? &id : NULL, &o);
      return false;
    }
  has_params = object_get (message, "params", &params);
  o = dispatch (method, has_params ? &params : NULL);
  /* A notification is never answered, whatever it came to. */
  if (has_id)
    reply (&id, &o);
  return o.exit_after;
}

/* A whole line read (@overlong: its first MAX_LINE bytes); true when the
 * server is to exit. */
static bool
end_line (const char *line, size_t len, bool overlong)
{
  if (overlong)
    {
      outcome o = fail (RPC_PARSE_ERROR, "Parse error: line longer than " MAX_LINE_TEXT " bytes");

      reply (NULL, &o);
      return false;
    }
  return handle_line (line, len);
}

int
main (int argc, char **argv)
{
  static char line[MAX_LINE];
  size_t len = 0;
  bool overlong = false;
  const char *env = getenv ("RPC_UPDATE_CHECK");
  int c;

  update_check_enabled = env && *env && strcmp (env, "0") != 0;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--update-check") == 0)
        update_check_enabled = true;
      else
        {
          fprintf (stderr,
                   "rpc-server: unknown argument '%s' (usage: rpc-server [--update-check])\n",
                   argv[i]);
          return 2;
        }
    }

  while ((c = getchar ()) != EOF)
    {
      if (c != '\n')
        {
          if (len < sizeof line)
            line[len++] = (char) c;
          else
            overlong = true;
          continue;
        }
      if (end_line (line, len, overlong))
        return 0;
      len = 0;
      overlong = false;
    }
  /* The last line, if the client ended without its '\n'. */
  if (len > 0 || overlong)
    end_line (line, len, overlong);
  return 0;
}
