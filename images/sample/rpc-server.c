/* rpc-server: the `rpc` sample image's entrypoint.  A JSON-RPC 2.0 server
 * on stdio, one message per line, the way an MCP stdio server talks to its
 * client; it never touches the network, so a run of this image must record
 * no attempt at all however long the conversation.
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
 * allocate without bound.  Static C, no GLib (guest code). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
main (void)
{
  static char line[MAX_LINE];
  size_t len = 0;
  bool overlong = false;
  int c;

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
