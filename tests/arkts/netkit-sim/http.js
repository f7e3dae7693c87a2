'use strict';
// A simulator of `@kit.NetworkKit`'s `http` (@ohos.net.http) for Node, on real sockets
// (node:http), for running ohos/arkagent/src/main/ets/NetworkKitTransport.ets off-device
// (OHOS-8). It reproduces what netstack really does, not what its documentation
// suggests; every behaviour names the netstack source it comes from:
//
//   openharmony/communication_netstack @ OpenHarmony-v5.0.0-Release (API 12, the HAR's
//   minimum), directory frameworks/js/napi/http/ — checked against master (c7520b36,
//   2026-08) where noted. Files: http_exec/src/http_exec.cpp (HttpExec::…),
//   http_module/src/http_module.cpp (HttpModuleExports::…),
//   async_context/src/request_context.cpp (RequestContext::…),
//   options/src/http_response.cpp (HttpResponse::…), constant/ (HttpConstant, error codes).
//
// Its own tests (sim.test.js) pin these behaviours against a plain node:http server, so
// the simulator cannot drift into agreeing with the transport it is used to test.
//
// Not simulated (README.md in this directory says why none of it matters to the transport):
// TLS (so the connect timeout covers TCP only), the cookie engine and `cookies`, caching,
// proxies, upload progress, 'headerReceive' (deprecated), once(), multipart, DNS,
// interceptors.
//
// Event order (setEventOrder): netstack emits 'headersReceive' through its own uv work
// item (EventManager::EmitByUvWithoutCheck → EventListener::EmitByUv →
// NapiUtils::CreateUvQueueWork), while 'dataReceive', 'dataReceiveProgress', 'dataEnd' and
// the Promise's settlement go through one FIFO per module
// (NapiUtils::CreateUvQueueWorkByModuleId), which orders them only among themselves. So a
// header event may reach JS after any number of body events — even after 'dataEnd' and the
// settlement. By default the simulator delivers in the arrival order; with
// setEventOrder({ seed }) each header event is held back past a seeded number of body-queue
// events (or past the end), as netstack may.

const nodeHttp = require('node:http');

/** RequestMethod (interface_sdk-js @ohos.net.http.d.ts, API 12): no PATCH member. */
const RequestMethod = Object.freeze({
  OPTIONS: 'OPTIONS', GET: 'GET', HEAD: 'HEAD', POST: 'POST', PUT: 'PUT', DELETE: 'DELETE', TRACE: 'TRACE', CONNECT: 'CONNECT',
});

/** HttpDataType (http_module.cpp InitHttpDataType: STRING 0, OBJECT 1, ARRAY_BUFFER 2). */
const HttpDataType = Object.freeze({ STRING: 0, OBJECT: 1, ARRAY_BUFFER: 2 });

/** HttpProtocol (http_module.cpp). */
const HttpProtocol = Object.freeze({ HTTP1_1: 0, HTTP2: 1, HTTP3: 2 });

/** ResponseCode: a few members (http_module.cpp DECLARE_RESPONSE_CODE). */
const ResponseCode = Object.freeze({ OK: 200, BAD_REQUEST: 400, UNAUTHORIZED: 401, NOT_FOUND: 404, INTERNAL_ERROR: 500 });

// Error codes: constant.h HTTP_ERROR_CODE_BASE = 2300000 + the curl code; messages from
// request_context.cpp HTTP_ERR_MAP. A parse error is base_context.h PARSE_ERROR_CODE 401.
const ERRORS = Object.freeze({
  PARSE: [401, 'Parameter error'],
  COULDNT_CONNECT: [2300007, "Couldn't connect to server"], // CURLE_COULDNT_CONNECT 7
  PARTIAL_FILE: [2300018, 'Transferred a partial file'], // CURLE_PARTIAL_FILE 18
  WRITE_ERROR: [2300023, 'Failed writing received data to disk/application'], // CURLE_WRITE_ERROR 23
  TIMEOUT: [2300028, 'Timeout was reached'], // CURLE_OPERATION_TIMEDOUT 28
  GOT_NOTHING: [2300052, 'Server returned nothing (no headers, no data)'], // CURLE_GOT_NOTHING 52
  TOO_MANY_REDIRECTS: [2300047, 'Number of redirects hit maximum amount'], // CURLE_TOO_MANY_REDIRECTS 47
  RECV_ERROR: [2300056, 'Failure when receiving data from the peer'], // CURLE_RECV_ERROR 56
  // HttpExec::ExecRequest's NETSTACK_NAPI_INTERNAL_ERROR (2300002) as JS sees it (see start()).
  UNKNOWN_OTHER: [2300999, 'Unknown Other Error'],
});

// curl's default CURLOPT_MAXREDIRS since 8.3 (netstack does not set it).
const MAX_REDIRECTS = 30;

// Defaults: constant.cpp DEFAULT_READ_TIMEOUT 60000, DEFAULT_CONNECT_TIMEOUT 60000,
// DEFAULT_MAX_LIMIT 5 MiB, MAX_LIMIT 100 MiB; http_request_options.cpp: method GET.
const DEFAULT_READ_TIMEOUT = 60000;
const DEFAULT_CONNECT_TIMEOUT = 60000;
const DEFAULT_MAX_LIMIT = 5 * 1024 * 1024;
const MAX_LIMIT = 100 * 1024 * 1024;

// HttpExec::MethodForGet / MethodForPost (API 12 and 6.0: PATCH is in neither, and
// SetOption refuses any other method; master added PATCH to MethodForPost).
const GET_LIKE = new Set(['HEAD', 'OPTIONS', 'TRACE', 'GET', 'CONNECT']);
const POST_LIKE = new Set(['POST', 'PUT', 'DELETE', '']);

/**
 * A rejection value: NapiUtils::CreateErrorMessage builds a plain object with `code` and
 * `message` (not an Error instance); AsyncWorkRequestInStreamCallback /
 * AsyncWorkRequestCallback reject the Promise with it.
 */
function businessError([code, message]) {
  return { code, message };
}

/**
 * The header object given to 'headersReceive' and in HttpResponse.header:
 * HttpResponse::ParseHeaders lower-cases and strips names and values; a line without ':'
 * (the status line) becomes a key with an empty value, and set-cookie lines are
 * collected apart; MakeHeaderWithSetCookieArray / MakeResponseHeader then skip every
 * entry whose value is empty — the status line never reaches JS — and give set-cookie as
 * an array. A repeated header keeps its last value (a std::map assignment).
 * `rawHeaders` holds every header block of the transfer so far (1xx, redirect hops) and
 * `cookies` persists across blocks: ParseHeaders re-parses the whole raw header at each
 * block and appends its set-cookie lines again to the same list (setCookie_), so from the
 * second block on earlier cookies repeat.
 */
function headerObject(rawHeaders, cookies = []) {
  const header = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].trim().toLowerCase();
    const value = rawHeaders[i + 1].trim();
    if (name === 'set-cookie') {
      cookies.push(value);
    } else if (name !== '' && value !== '') {
      header[name] = value;
    }
  }
  if (cookies.length > 0) header['set-cookie'] = [...cookies];
  return header;
}

function toArrayBuffer(buffer) {
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length);
}

/**
 * The body bytes of `extraData` (RequestContext::GetRequestBody: a string, an ArrayBuffer,
 * or an object as JSON), copied as netstack copies them into the request
 * (HttpRequestOptions::SetBody) while `request()` / `requestInStream()` parses its options:
 * the caller's buffer is not read again. `null` for an empty body, which GetRequestBody
 * refuses ("if body is empty, return false", and a detached or empty ArrayBuffer has no
 * data pointer): the parse then fails (401).
 */
function bodyOf(extraData) {
  let bytes;
  if (extraData instanceof ArrayBuffer) bytes = Buffer.from(new Uint8Array(extraData));
  else if (typeof extraData === 'string') bytes = Buffer.from(extraData, 'utf8');
  else bytes = Buffer.from(JSON.stringify(extraData), 'utf8');
  return bytes.length > 0 ? bytes : null;
}

/**
 * One `http.HttpRequest` (HttpModuleExports::CreateHttp: a fresh object with its own
 * event manager). Body events and Promise settlements are queued to the event loop in
 * order, one macrotask each, as netstack's module queue is
 * (NapiUtils::CreateUvQueueWorkByModuleId); header events go through `hold` (see
 * setEventOrder).
 */
class HttpRequest {
  constructor(order = null, index = 0) {
    this.listeners = new Map();
    this.destroyed = false;
    this.tasks = [];
    this.draining = false;
    /** Header events held back: { task, remaining, timer }. */
    this.held = [];
    this.headerEvents = 0;
    this.finished = false;
    this.order = order;
    this.random = order && order.seed !== undefined ? prng((order.seed * 7919 + index) >>> 0) : null;
    /** Test hook: every native request this object made (node:http ClientRequest), hops included. */
    this.clientRequests = [];
  }

  /**
   * on(type, callback) for 'headersReceive', 'dataReceive', 'dataEnd',
   * 'dataReceiveProgress' (HttpModuleExports::HttpRequest::On → EventManager::AddListener,
   * which first removes every listener of that type: one listener per type, the last one
   * registered).
   */
  on(type, callback) {
    if (typeof callback !== 'function') return;
    this.listeners.set(type, [callback]);
  }

  /** off(type, callback?): without a callback every listener of `type` (HttpRequest::Off). */
  off(type, callback) {
    if (callback === undefined) {
      this.listeners.delete(type);
    } else {
      this.listeners.set(type, (this.listeners.get(type) || []).filter((f) => f !== callback));
    }
  }

  /**
   * destroy() (HttpModuleExports::HttpRequest::Destroy): only marks the event manager
   * destroyed (SetEventDestroy) and drops its reference to this JS object
   * (DeleteEventReference); the listeners stay, and events already queued still fire
   * (EventManager::Emit and the uv callbacks do not look at the flag). A second call does
   * nothing. It does NOT close the connection by itself: curl notices only in its
   * callbacks — HttpExec::OnWritingMemoryHeader / OnWritingMemoryBody return 0 when
   * IsEventDestroy(), so the transfer aborts with CURLE_WRITE_ERROR (2300023) when the
   * next header or body bytes arrive, or it runs into readTimeout (2300028). Meanwhile
   * the socket stays open. The Promise still settles then.
   */
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
  }

  /** request(url, options?) → Promise<HttpResponse> (also (url, callback) / (url, options, callback)). */
  request(url, options, callback) {
    if (typeof options === 'function') return this.request(url, undefined, options);
    const promise = this.start(url, options, false);
    if (typeof callback === 'function') {
      promise.then((r) => callback(undefined, r), (e) => callback(e, undefined));
      return undefined;
    }
    return promise;
  }

  /** requestInStream(url, options?) → Promise<number>, the response code. */
  requestInStream(url, options) {
    return this.start(url, options, true);
  }

  /** Runs `task` after the tasks queued before it, one macrotask each (the module queue). */
  queue(task) {
    this.tasks.push(task);
    if (this.draining) return;
    this.draining = true;
    const next = () => {
      const t = this.tasks.shift();
      if (t === undefined) {
        this.draining = false;
        if (this.finished) {
          const later = this.order && this.order.afterEndMs;
          if (later) setTimeout(() => this.releaseAll(), later);
          else this.releaseAll();
        }
        return;
      }
      try {
        t();
      } finally {
        for (const h of [...this.held]) {
          h.remaining -= 1;
          if (h.remaining <= 0) this.release(h);
        }
        setImmediate(next);
      }
    };
    setImmediate(next);
  }

  /** The last task of a request (its settlement): held header events may go after it. */
  queueLast(task) {
    this.queue(() => {
      this.finished = true;
      task();
    });
  }

  /** Queues a header event: its own uv work item, possibly overtaken by the module queue. */
  hold(task) {
    let remaining = 0;
    if (this.order && this.order.headersAfter !== undefined) {
      const spec = this.order.headersAfter;
      remaining = Array.isArray(spec) ? spec[Math.min(this.headerEvents, spec.length - 1)] : spec;
      this.headerEvents += 1;
    } else if (this.random) {
      const r = this.random();
      remaining = r < 0.2 ? 0 : r < 0.4 ? 1 : r < 0.6 ? 2 : r < 0.8 ? 3 : Infinity;
    }
    if (remaining === 0) {
      this.queue(task);
      return;
    }
    const h = { task, remaining, timer: null };
    h.timer = setTimeout(() => this.release(h), this.order.maxHoldMs);
    this.held.push(h);
  }

  release(h) {
    const i = this.held.indexOf(h);
    if (i < 0) return;
    this.held.splice(i, 1);
    clearTimeout(h.timer);
    setImmediate(h.task);
  }

  releaseAll() {
    for (const h of [...this.held]) this.release(h);
  }

  /**
   * Emits `type` (RequestContext::EmitSharedManager → EventManager::Emit: to the listeners
   * registered now, destroyed or not). A throwing listener does not stop netstack; here it
   * is reported like an uncaught exception would be, asynchronously.
   */
  emit(type, arg) {
    for (const f of [...(this.listeners.get(type) || [])]) {
      try { f(arg); } catch (e) { setImmediate(() => { throw e; }); }
    }
  }

  start(url, options = {}, inStream) {
    return new Promise((resolve, reject) => {
      const rejectLast = (error) => this.queueLast(() => reject(businessError(error)));
      // RequestContext::ParseParams / UrlAndOptions: url must be a string, options an
      // object; otherwise the parse fails and the Promise rejects with 401.
      if (typeof url !== 'string' || (options !== undefined && (typeof options !== 'object' || options === null))) {
        rejectLast(ERRORS.PARSE);
        return;
      }
      const opts = options || {};
      // RequestContext::UrlAndOptions: any string method is taken as is; default GET.
      const method = typeof opts.method === 'string' ? opts.method : 'GET';
      let target = url;
      let body = null;
      const headers = {};
      // RequestContext::ParseExtraData: GET-like methods put extraData in the query
      // (HandleMethodForGet), POST-like ones send it as the body (GetRequestBody, which
      // also defaults content-type to application/json); any other method with extraData
      // fails the parse (401) — at API 12 and 6.0 that includes PATCH.
      if (opts.extraData !== undefined && opts.extraData !== null) {
        if (GET_LIKE.has(method)) {
          if (typeof opts.extraData === 'string' && opts.extraData !== '') {
            target += (target.includes('?') ? '&' : '?') + opts.extraData;
          }
        } else if (POST_LIKE.has(method)) {
          body = bodyOf(opts.extraData);
          if (body === null) {
            rejectLast(ERRORS.PARSE);
            return;
          }
          headers['content-type'] = 'application/json';
        } else {
          rejectLast(ERRORS.PARSE);
          return;
        }
      }
      // RequestContext::ParseHeader: the app's headers (names lower-cased) override the default.
      for (const [name, value] of Object.entries(opts.header || {})) headers[name.toLowerCase()] = String(value);
      // ParseNumberOptions; HttpRequestOptions::SetMaxLimit clamps to MAX_LIMIT. readTimeout
      // becomes CURLOPT_TIMEOUT_MS (HttpExec::SetOption): the whole transfer, connect
      // included; 0 means no limit (curl).
      // timeScale: a test hook (setTimeScale), never netstack's.
      const readTimeout = (typeof opts.readTimeout === 'number' ? opts.readTimeout : DEFAULT_READ_TIMEOUT) * timeScale;
      const connectTimeout = (typeof opts.connectTimeout === 'number' ? opts.connectTimeout : DEFAULT_CONNECT_TIMEOUT) * timeScale;
      const maxLimit = Math.min(typeof opts.maxLimit === 'number' ? opts.maxLimit : DEFAULT_MAX_LIMIT, MAX_LIMIT);
      const dataType = opts.expectDataType;

      if (this.destroyed) {
        // HttpExec::ExecRequest returns false for a destroyed request: nothing is sent.
        rejectLast(ERRORS.WRITE_ERROR);
        return;
      }
      // HttpExec::SetOption (API 12 and 6.0): a method outside MethodForGet / MethodForPost
      // (PATCH) fails the request before curl runs: ExecRequest sets
      // NETSTACK_NAPI_INTERNAL_ERROR (2300002), which RequestContext::GetErrorCode, not
      // finding 2300002 + 2300000 in HTTP_ERR_MAP, reports as 2300999 "Unknown Other Error".
      // Nothing is sent. (6.1 drops this check; master adds PATCH to MethodForPost.)
      if (!GET_LIKE.has(method) && !POST_LIKE.has(method)) {
        rejectLast(ERRORS.UNKNOWN_OTHER);
        return;
      }

      let parsed;
      try {
        parsed = new URL(target);
      } catch {
        rejectLast([2300003, 'URL using bad/illegal format or missing URL']);
        return;
      }

      let settled = false;
      let timer = null;
      let connectTimer = null;
      let current = null; // the ClientRequest of the current hop
      const cleanup = () => {
        settled = true;
        clearTimeout(timer);
        clearTimeout(connectTimer);
      };
      // HttpExec::HandleCurlData → GetCurlDataFromHandle: a curl error rejects; curl
      // closes the connection of a failed transfer.
      const fail = (error) => {
        if (settled) return;
        cleanup();
        if (current) current.destroy();
        rejectLast(error);
      };
      if (readTimeout > 0) timer = setTimeout(() => fail(ERRORS.TIMEOUT), readTimeout);

      // HttpResponse::AppendRawHeader / ParseHeaders: the raw header of every block of the
      // transfer (1xx, each redirect hop, the final one) accumulates, and each complete
      // block re-parses all of it (OnWritingMemoryHeader emits 'headersReceive' then).
      const rawHeaders = [];
      const cookies = [];
      let hops = 0;
      let header = {};
      const headerBlock = (raw) => {
        rawHeaders.push(...raw);
        header = headerObject(rawHeaders, cookies);
        const snapshot = { ...header };
        this.hold(() => this.emit('headersReceive', snapshot));
      };

      const send = (hopUrl, hopBody) => {
        // The app's headers (CURLOPT_HTTPHEADER) go with every hop.
        const hopHeaders = { ...headers };
        if (hopBody !== null) hopHeaders['content-length'] = String(hopBody.length);
        const clientRequest = nodeHttp.request({
          host: hopUrl.hostname, port: hopUrl.port || 80, path: hopUrl.pathname + hopUrl.search, method, headers: hopHeaders, agent: false,
        });
        current = clientRequest;
        this.clientRequests.push(clientRequest);
        // CURLOPT_CONNECTTIMEOUT_MS: per connection (here: plain TCP; no TLS is simulated).
        if (connectTimeout > 0) {
          clearTimeout(connectTimer);
          connectTimer = setTimeout(() => fail(ERRORS.TIMEOUT), connectTimeout);
          clientRequest.on('socket', (socket) => socket.once('connect', () => clearTimeout(connectTimer)));
        }
        clientRequest.on('error', (e) => {
          if (e.code === 'ECONNREFUSED') fail(ERRORS.COULDNT_CONNECT);
          else if (e.code === 'ECONNRESET' && e.message === 'socket hang up') fail(ERRORS.GOT_NOTHING);
          else fail(ERRORS.RECV_ERROR);
        });
        // A 1xx block (100 Continue, 103 Early Hints): a header block of its own.
        clientRequest.on('information', (info) => {
          if (settled) return;
          if (this.destroyed) { fail(ERRORS.WRITE_ERROR); return; }
          headerBlock(info.rawHeaders);
        });
        clientRequest.on('response', (response) => onResponse(response, hopUrl, hopBody));
        clientRequest.end(hopBody === null ? undefined : hopBody);
      };

      const onResponse = (response, hopUrl, hopBody) => {
        if (settled) return;
        // OnWritingMemoryHeader: destroyed → return 0 → CURLE_WRITE_ERROR.
        if (this.destroyed) {
          fail(ERRORS.WRITE_ERROR);
          return;
        }
        // 'headersReceive' once the block is complete (raw header ends with \r\n\r\n) —
        // before any body byte of it is written, for request() too.
        headerBlock(response.rawHeaders);
        const status = response.statusCode;
        const location = response.headers.location;
        // CURLOPT_FOLLOWLOCATION 1 (HttpExec::SetOption): curl follows the redirect; the
        // redirect's body never reaches the write callback. CURLOPT_CUSTOMREQUEST keeps the
        // method string on every hop; curl re-sends the hop's body only for 307/308.
        if ([301, 302, 303, 307, 308].includes(status) && location) {
          response.resume();
          response.on('end', () => {
            if (settled) return;
            hops += 1;
            if (hops > MAX_REDIRECTS) {
              fail(ERRORS.TOO_MANY_REDIRECTS);
              return;
            }
            let next;
            try {
              next = new URL(location, hopUrl);
            } catch {
              fail([2300003, 'URL using bad/illegal format or missing URL']);
              return;
            }
            send(next, status === 307 || status === 308 ? hopBody : null);
          });
          return;
        }
        const total = Number(response.headers['content-length'] || 0);
        const chunks = [];
        let collected = 0;
        let received = 0;
        response.on('data', (chunk) => {
          if (settled) return;
          // OnWritingMemoryBody: destroyed → return 0 → CURLE_WRITE_ERROR.
          if (this.destroyed) {
            fail(ERRORS.WRITE_ERROR);
            return;
          }
          received += chunk.length;
          if (inStream) {
            // In a stream every write becomes one 'dataReceive' with an ArrayBuffer
            // (OnDataReceive); maxLimit is not checked. ProgressCallback queues
            // 'dataReceiveProgress' only when the total size is known (dltotal != 0).
            const data = toArrayBuffer(Buffer.from(chunk));
            this.queue(() => this.emit('dataReceive', data));
            if (total > 0) {
              const progress = { receiveSize: received, totalSize: total };
              this.queue(() => this.emit('dataReceiveProgress', progress));
            }
          } else {
            // request(): the body is collected. The limit is checked BEFORE appending
            // (OnWritingMemoryBody: what is already collected > maxLimit, or this write >
            // maxLimit, returns 0): a write that crosses the limit is still taken.
            if (collected > maxLimit || chunk.length > maxLimit) {
              fail(ERRORS.WRITE_ERROR);
              return;
            }
            collected += chunk.length;
            chunks.push(Buffer.from(chunk));
          }
        });
        response.on('aborted', () => fail(ERRORS.PARTIAL_FILE));
        response.on('error', () => fail(ERRORS.PARTIAL_FILE));
        response.on('end', () => {
          if (settled) return;
          if (!response.complete) {
            fail(ERRORS.PARTIAL_FILE);
            return;
          }
          cleanup();
          if (inStream) {
            // AsyncWorkRequestInStreamCallback: on success it emits 'dataEnd' FIRST, then
            // resolves the Promise with the response code — an HTTP error status is a
            // success here (no CURLOPT_FAILONERROR; GetCurlDataFromHandle reads
            // CURLINFO_RESPONSE_CODE).
            this.queueLast(() => {
              this.emit('dataEnd', undefined);
              resolve(status);
            });
          } else {
            // HttpExec::BuildRequestCallback: ProcByExpectDataType for an expectDataType
            // (OBJECT falls through when the body is not JSON); otherwise by content-type:
            // application/octet-stream or image/* → ArrayBuffer, anything else a string.
            const bytes = Buffer.concat(chunks);
            let result;
            let resultType;
            if (dataType === HttpDataType.STRING) {
              result = bytes.toString('utf8');
              resultType = HttpDataType.STRING;
            } else if (dataType === HttpDataType.ARRAY_BUFFER) {
              result = toArrayBuffer(bytes);
              resultType = HttpDataType.ARRAY_BUFFER;
            } else if (dataType === HttpDataType.OBJECT) {
              try {
                result = JSON.parse(bytes.toString('utf8'));
                resultType = HttpDataType.OBJECT;
              } catch {
                result = undefined;
              }
            }
            if (resultType === undefined) {
              const type = String(header['content-type'] || '').toLowerCase();
              if (type.includes('application/octet-stream') || type.includes('image')) {
                result = toArrayBuffer(bytes);
                resultType = HttpDataType.ARRAY_BUFFER;
              } else {
                result = bytes.toString('utf8');
                resultType = HttpDataType.STRING;
              }
            }
            // `cookies`: curl's cookie list (CURLINFO_COOKIELIST), not simulated (README).
            const httpResponse = { result, resultType, responseCode: status, header: { ...header }, cookies: '' };
            this.queueLast(() => resolve(httpResponse));
          }
        });
      };

      send(parsed, body);
    });
  }
}

/** A small seeded PRNG (mulberry32): the same seed gives the same event orders. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let eventOrder = null;
let created = 0;
let timeScale = 1;

/**
 * A test hook, not netstack behaviour: from now on every `readTimeout` and
 * `connectTimeout` lasts `factor` times its value (e.g. 0.001: an hour passes in 3.6 s),
 * so a test can run the transport with its default options at a scale of seconds.
 * `setTimeScale(1)` restores real time.
 */
function setTimeScale(factor) {
  timeScale = factor;
}

/**
 * How the HttpRequest objects created from now on deliver 'headersReceive' relative to the
 * body queue (see the top of this file). `null` (the default): in arrival order.
 * `{ seed }`: each header event is held back past 0, 1, 2 or 3 body-queue events or past the
 * end of the request (one in five each), from a PRNG seeded with `seed` and the object's
 * creation index since this call. `{ headersAfter: n }`: always past n body-queue events (Infinity: after
 * the settlement); `{ headersAfter: [n1, n2, …] }`: the i-th header event of a request past
 * ni (the last value for the rest). A held event is delivered after `maxHoldMs` (default 200) at the latest,
 * as a uv work item is not held for ever. An event held past the end goes right after the
 * settlement, or `afterEndMs` later when set (a JS thread busy elsewhere).
 */
function setEventOrder(order) {
  eventOrder = order ? { maxHoldMs: 200, ...order } : null;
  created = 0; // the same seed gives the same orders from here on
}

/** `http.createHttp()`. */
function createHttp() {
  created += 1;
  return new HttpRequest(eventOrder, created);
}

const http = { createHttp, RequestMethod, HttpDataType, HttpProtocol, ResponseCode };

module.exports = { http, ERRORS, DEFAULT_MAX_LIMIT, MAX_LIMIT, setEventOrder, setTimeScale };
