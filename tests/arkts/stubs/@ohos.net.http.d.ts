/*
 * Minimal stub of @ohos.net.http (@kit.NetworkKit): the members of `http` that
 * ohos/arkagent/src/main/ets/NetworkKitTransport.ets uses.
 *
 * Source: interface_sdk-js api/@ohos.net.http.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import type { AsyncCallback, Callback } from './@ohos.base';

declare namespace http {
  function createHttp(): HttpRequest;

  export interface HttpRequestOptions {
    method?: RequestMethod;
    extraData?: string | Object | ArrayBuffer;
    expectDataType?: HttpDataType;
    usingCache?: boolean;
    priority?: number;
    header?: Object;
    readTimeout?: number;
    connectTimeout?: number;
    usingProtocol?: HttpProtocol;
    maxLimit?: number;
  }

  export enum RequestMethod {
    OPTIONS = 'OPTIONS',
    GET = 'GET',
    HEAD = 'HEAD',
    POST = 'POST',
    PUT = 'PUT',
    DELETE = 'DELETE',
    TRACE = 'TRACE',
    CONNECT = 'CONNECT'
  }

  export enum ResponseCode {
    OK = 200,
    CREATED,
    ACCEPTED,
    NOT_AUTHORITATIVE,
    NO_CONTENT,
    RESET,
    PARTIAL,
    MULT_CHOICE = 300,
    MOVED_PERM,
    MOVED_TEMP,
    SEE_OTHER,
    NOT_MODIFIED,
    USE_PROXY,
    BAD_REQUEST = 400,
    UNAUTHORIZED,
    PAYMENT_REQUIRED,
    FORBIDDEN,
    NOT_FOUND,
    BAD_METHOD,
    NOT_ACCEPTABLE,
    PROXY_AUTH,
    CLIENT_TIMEOUT,
    CONFLICT,
    GONE,
    LENGTH_REQUIRED,
    PRECON_FAILED,
    ENTITY_TOO_LARGE,
    REQ_TOO_LONG,
    UNSUPPORTED_TYPE,
    RANGE_NOT_SATISFIABLE,
    INTERNAL_ERROR = 500,
    NOT_IMPLEMENTED,
    BAD_GATEWAY,
    UNAVAILABLE,
    GATEWAY_TIMEOUT,
    VERSION
  }

  export enum HttpProtocol {
    HTTP1_1,
    HTTP2,
    HTTP3
  }

  export enum HttpDataType {
    STRING,
    OBJECT = 1,
    ARRAY_BUFFER = 2
  }

  export interface HttpResponse {
    result: string | Object | ArrayBuffer;
    resultType: HttpDataType;
    responseCode: ResponseCode | number;
    header: Object;
    cookies: string;
  }

  export interface DataReceiveProgressInfo {
    receiveSize: number;
    totalSize: number;
  }

  export interface HttpRequest {
    request(url: string, callback: AsyncCallback<HttpResponse>): void;
    request(url: string, options: HttpRequestOptions, callback: AsyncCallback<HttpResponse>): void;
    request(url: string, options?: HttpRequestOptions): Promise<HttpResponse>;
    requestInStream(url: string, options?: HttpRequestOptions): Promise<number>;
    destroy(): void;
    on(type: 'headersReceive', callback: Callback<Object>): void;
    off(type: 'headersReceive', callback?: Callback<Object>): void;
    on(type: 'dataReceive', callback: Callback<ArrayBuffer>): void;
    off(type: 'dataReceive', callback?: Callback<ArrayBuffer>): void;
    on(type: 'dataEnd', callback: Callback<void>): void;
    off(type: 'dataEnd', callback?: Callback<void>): void;
    on(type: 'dataReceiveProgress', callback: Callback<DataReceiveProgressInfo>): void;
    off(type: 'dataReceiveProgress', callback?: Callback<DataReceiveProgressInfo>): void;
  }
}

export default http;
