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
// Not simulated: caching, cookies jars, proxies, TLS options, upload progress,
// 'headerReceive' (deprecated), once(), multipart, DNS, interceptors.

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
  RECV_ERROR: [2300056, 'Failure when receiving data from the peer'], // CURLE_RECV_ERROR 56
});

// Defaults: constant.cpp DEFAULT_READ_TIMEOUT 60000, DEFAULT_CONNECT_TIMEOUT 60000,
// DEFAULT_MAX_LIMIT 5 MiB, MAX_LIMIT 100 MiB; http_request_options.cpp: method GET.
const DEFAULT_READ_TIMEOUT = 60000;
const DEFAULT_CONNECT_TIMEOUT = 60000;
const DEFAULT_MAX_LIMIT = 5 * 1024 * 1024;
const MAX_LIMIT = 100 * 1024 * 1024;

// HttpExec::MethodForGet / MethodForPost (API 12: PATCH is in neither; master added PATCH
// to MethodForPost).
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
 */
function headerObject(rawHeaders) {
  const header = {};
  const cookies = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].trim().toLowerCase();
    const value = rawHeaders[i + 1].trim();
    if (name === 'set-cookie') {
      cookies.push(value);
    } else if (name !== '' && value !== '') {
      header[name] = value;
    }
  }
  if (cookies.length > 0) header['set-cookie'] = cookies;
  return header;
}

function toArrayBuffer(buffer) {
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length);
}

/** The body bytes of `extraData` (RequestContext::GetRequestBody: string or ArrayBuffer; an object as JSON). */
function bodyOf(extraData) {
  if (extraData instanceof ArrayBuffer) return Buffer.from(extraData);
  if (typeof extraData === 'string') return Buffer.from(extraData, 'utf8');
  return Buffer.from(JSON.stringify(extraData), 'utf8');
}

/**
 * One `http.HttpRequest` (HttpModuleExports::CreateHttp: a fresh object with its own
 * event manager). Event callbacks and Promise settlements are queued to the event loop in
 * order, one macrotask each, as netstack's uv work items are
 * (NapiUtils::CreateUvQueueWorkByModuleId).
 */
class HttpRequest {
  constructor() {
    this.listeners = new Map();
    this.destroyed = false;
    this.tasks = [];
    this.draining = false;
    /** Test hook: every native request this object made (node:http ClientRequest). */
    this.clientRequests = [];
  }

  /**
   * on(type, callback) for 'headersReceive', 'dataReceive', 'dataEnd',
   * 'dataReceiveProgress' (HttpModuleExports::HttpRequest::On; a callback registered
   * twice is kept once, like the EventManager's listener list).
   */
  on(type, callback) {
    if (typeof callback !== 'function') return;
    const list = this.listeners.get(type) || [];
    if (!list.includes(callback)) list.push(callback);
    this.listeners.set(type, list);
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
   * destroy() (HttpModuleExports::HttpRequest::Destroy): marks the event manager
   * destroyed and drops the listeners (SetEventDestroy, DeleteEventReference); a second
   * call does nothing. It does NOT close the connection by itself: curl notices only in
   * its callbacks — HttpExec::OnWritingMemoryHeader / OnWritingMemoryBody return 0 when
   * IsEventDestroy(), so the transfer aborts with CURLE_WRITE_ERROR (2300023) when the
   * next header or body bytes arrive, or it runs into readTimeout (2300028). Meanwhile
   * the socket stays open. The Promise still settles (rejects) then.
   */
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.listeners.clear();
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

  /** Runs `task` after the tasks queued before it, one macrotask each. */
  queue(task) {
    this.tasks.push(task);
    if (this.draining) return;
    this.draining = true;
    const next = () => {
      const t = this.tasks.shift();
      if (t === undefined) {
        this.draining = false;
        return;
      }
      try { t(); } finally { setImmediate(next); }
    };
    setImmediate(next);
  }

  /**
   * Emits `type` (RequestContext::EmitSharedManager → EventManager::Emit: nothing once
   * destroyed). A throwing listener does not stop netstack; here it is reported like an
   * uncaught exception would be, asynchronously.
   */
  emit(type, arg) {
    if (this.destroyed) return;
    for (const f of [...(this.listeners.get(type) || [])]) {
      try { f(arg); } catch (e) { setImmediate(() => { throw e; }); }
    }
  }

  start(url, options = {}, inStream) {
    return new Promise((resolve, reject) => {
      // RequestContext::ParseParams / UrlAndOptions: url must be a string, options an
      // object; otherwise the parse fails and the Promise rejects with 401.
      if (typeof url !== 'string' || (options !== undefined && (typeof options !== 'object' || options === null))) {
        this.queue(() => reject(businessError(ERRORS.PARSE)));
        return;
      }
      const opts = options || {};
      // RequestContext::UrlAndOptions: any string method is taken as is (it becomes
      // CURLOPT_CUSTOMREQUEST in HttpExec::SetOption); default GET.
      const method = typeof opts.method === 'string' ? opts.method : 'GET';
      let target = url;
      let body = null;
      const headers = {};
      // RequestContext::ParseExtraData: GET-like methods put extraData in the query
      // (HandleMethodForGet), POST-like ones send it as the body (GetRequestBody, which
      // also defaults content-type to application/json); any other method with extraData
      // fails the parse (401) — at API 12 that includes PATCH.
      if (opts.extraData !== undefined && opts.extraData !== null) {
        if (GET_LIKE.has(method)) {
          if (typeof opts.extraData === 'string' && opts.extraData !== '') {
            target += (target.includes('?') ? '&' : '?') + opts.extraData;
          }
        } else if (POST_LIKE.has(method)) {
          body = bodyOf(opts.extraData);
          headers['content-type'] = 'application/json';
        } else {
          this.queue(() => reject(businessError(ERRORS.PARSE)));
          return;
        }
      }
      // RequestContext::ParseHeader: the app's headers (names lower-cased) override the default.
      for (const [name, value] of Object.entries(opts.header || {})) headers[name.toLowerCase()] = String(value);
      // ParseNumberOptions; HttpRequestOptions::SetMaxLimit clamps to MAX_LIMIT. readTimeout
      // becomes CURLOPT_TIMEOUT_MS (HttpExec::SetOption): the whole transfer, connect
      // included; 0 means no limit (curl).
      const readTimeout = typeof opts.readTimeout === 'number' ? opts.readTimeout : DEFAULT_READ_TIMEOUT;
      const connectTimeout = typeof opts.connectTimeout === 'number' ? opts.connectTimeout : DEFAULT_CONNECT_TIMEOUT;
      const maxLimit = Math.min(typeof opts.maxLimit === 'number' ? opts.maxLimit : DEFAULT_MAX_LIMIT, MAX_LIMIT);
      const dataType = opts.expectDataType;

      let settled = false;
      let timer = null;
      let connectTimer = null;
      const cleanup = () => {
        settled = true;
        clearTimeout(timer);
        clearTimeout(connectTimer);
      };
      // HttpExec::HandleCurlData → GetCurlDataFromHandle: a curl error rejects; curl
      // closes the connection of a failed transfer.
      const fail = (error, clientRequest) => {
        if (settled) return;
        cleanup();
        if (clientRequest) clientRequest.destroy();
        this.queue(() => reject(businessError(error)));
      };

      if (this.destroyed) {
        // HttpExec::ExecRequest returns false for a destroyed request: nothing is sent.
        this.queue(() => reject(businessError(ERRORS.WRITE_ERROR)));
        return;
      }

      let parsed;
      try {
        parsed = new URL(target);
      } catch {
        this.queue(() => reject(businessError([2300003, 'URL using bad/illegal format or missing URL'])));
        return;
      }
      if (body !== null) headers['content-length'] = String(body.length);
      const clientRequest = nodeHttp.request({
        host: parsed.hostname, port: parsed.port || 80, path: parsed.pathname + parsed.search, method, headers, agent: false,
      });
      this.clientRequests.push(clientRequest);
      if (readTimeout > 0) timer = setTimeout(() => fail(ERRORS.TIMEOUT, clientRequest), readTimeout);
      if (connectTimeout > 0) {
        connectTimer = setTimeout(() => fail(ERRORS.TIMEOUT, clientRequest), connectTimeout);
        clientRequest.on('socket', (socket) => socket.once('connect', () => clearTimeout(connectTimer)));
      }
      clientRequest.on('error', (e) => {
        if (e.code === 'ECONNREFUSED') fail(ERRORS.COULDNT_CONNECT);
        else if (e.code === 'ECONNRESET' && e.message === 'socket hang up') fail(ERRORS.GOT_NOTHING);
        else fail(ERRORS.RECV_ERROR);
      });
      clientRequest.on('response', (response) => {
        // OnWritingMemoryHeader: destroyed → return 0 → CURLE_WRITE_ERROR.
        if (this.destroyed) {
          fail(ERRORS.WRITE_ERROR, clientRequest);
          return;
        }
        const header = headerObject(response.rawHeaders);
        // OnWritingMemoryHeader emits 'headersReceive' once the header block is complete
        // (raw header ends with \r\n\r\n) — before any body byte, for request() too.
        this.queue(() => this.emit('headersReceive', { ...header }));
        const total = Number(response.headers['content-length'] || 0);
        const chunks = [];
        let received = 0;
        response.on('data', (chunk) => {
          if (settled) return;
          // OnWritingMemoryBody: destroyed → return 0 → CURLE_WRITE_ERROR.
          if (this.destroyed) {
            fail(ERRORS.WRITE_ERROR, clientRequest);
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
            // request(): the body is collected; past maxLimit the write returns 0.
            if (received > maxLimit) {
              fail(ERRORS.WRITE_ERROR, clientRequest);
              return;
            }
            chunks.push(Buffer.from(chunk));
          }
        });
        response.on('aborted', () => fail(ERRORS.PARTIAL_FILE, clientRequest));
        response.on('error', () => fail(ERRORS.PARTIAL_FILE, clientRequest));
        response.on('end', () => {
          if (settled) return;
          if (!response.complete) {
            fail(ERRORS.PARTIAL_FILE, clientRequest);
            return;
          }
          cleanup();
          const status = response.statusCode;
          if (inStream) {
            // AsyncWorkRequestInStreamCallback: on success it emits 'dataEnd' FIRST, then
            // resolves the Promise with the response code — an HTTP error status is a
            // success here (no CURLOPT_FAILONERROR; GetCurlDataFromHandle reads
            // CURLINFO_RESPONSE_CODE).
            this.queue(() => {
              this.emit('dataEnd', undefined);
              resolve(status);
            });
          } else {
            // HttpExec::BuildRequestCallback / ProcByExpectDataType.
            const bytes = Buffer.concat(chunks);
            let result;
            let resultType;
            if (dataType === HttpDataType.ARRAY_BUFFER) {
              result = toArrayBuffer(bytes);
              resultType = HttpDataType.ARRAY_BUFFER;
            } else if (dataType === HttpDataType.OBJECT) {
              try { result = JSON.parse(bytes.toString('utf8')); } catch { result = bytes.toString('utf8'); }
              resultType = HttpDataType.OBJECT;
            } else {
              result = bytes.toString('utf8');
              resultType = HttpDataType.STRING;
            }
            const httpResponse = { result, resultType, responseCode: status, header: { ...header }, cookies: '' };
            this.queue(() => resolve(httpResponse));
          }
        });
      });
      clientRequest.end(body === null ? undefined : body);
    });
  }
}

/** `http.createHttp()`. */
function createHttp() {
  return new HttpRequest();
}

const http = { createHttp, RequestMethod, HttpDataType, HttpProtocol, ResponseCode };

module.exports = { http, ERRORS, DEFAULT_MAX_LIMIT, MAX_LIMIT };
