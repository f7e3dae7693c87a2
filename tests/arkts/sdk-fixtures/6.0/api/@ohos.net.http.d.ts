// Excerpt (declarations verbatim, the others left out) of interface_sdk-js api/@ohos.net.http.d.ts (6.0), written by tests/arkts/sdk-fixtures/extract.js.
import type { AsyncCallback, Callback } from './@ohos.base';
import type connection from './@ohos.net.connection';


/**
 * Provides http related APIs.
 * @namespace http
 * @syscap SystemCapability.Communication.NetStack
 * @since 6
 */
/**
 * Provides http related APIs.
 * @namespace http
 * @syscap SystemCapability.Communication.NetStack
 * @crossplatform
 * @since 10
 */
/**
 * Provides http related APIs.
 * @namespace http
 * @syscap SystemCapability.Communication.NetStack
 * @crossplatform
 * @atomicservice
 * @since 11
 */
declare namespace http {


  /**
   * Creates an HTTP request task.
   * @returns { HttpRequest } the HttpRequest of the createHttp.
   * @syscap SystemCapability.Communication.NetStack
   * @since 6
   */
  /**
   * Creates an HTTP request task.
   * @returns { HttpRequest } the HttpRequest of the createHttp.
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @since 10
   */
  /**
   * Creates an HTTP request task.
   * @returns { HttpRequest } the HttpRequest of the createHttp.
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @atomicservice
   * @since 11
   */
  function createHttp(): HttpRequest;


  /**
   * Specifies the type and value range of the optional parameters in the HTTP request.
   * @interface HttpRequestOptions
   * @syscap SystemCapability.Communication.NetStack
   * @since 6
   */
  /**
   * Specifies the type and value range of the optional parameters in the HTTP request.
   * @interface HttpRequestOptions
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @since 10
   */
  /**
   * Specifies the type and value range of the optional parameters in the HTTP request.
   * @interface HttpRequestOptions
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @atomicservice
   * @since 11
   */
  export interface HttpRequestOptions {

    /**
     * Request method,default is GET.
     * @type {?RequestMethod}
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * Request method,default is GET.
     * @type {?RequestMethod}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Request method,default is GET.
     * @type {?RequestMethod}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    method?: RequestMethod;


    /**
     * Additional data of the request.
     * extraData can be a string or an Object (API 6) or an ArrayBuffer(API 8).
     * @type {?string | Object | ArrayBuffer}
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * Additional data of the request.
     * extraData can be a string or an Object (API 6) or an ArrayBuffer(API 8).
     * @type {?string | Object | ArrayBuffer}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Additional data of the request.
     * extraData can be a string or an Object (API 6) or an ArrayBuffer(API 8).
     * @type { ?(string | Object | ArrayBuffer) }
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    extraData?: string | Object | ArrayBuffer;


    /**
     * Data type to be returned. If this parameter is set, the system preferentially returns the specified type.
     * @type {?HttpDataType}
     * @syscap SystemCapability.Communication.NetStack
     * @since 9
     */
    /**
     * Data type to be returned. If this parameter is set, the system preferentially returns the specified type.
     * @type {?HttpDataType}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Data type to be returned. If this parameter is set, the system preferentially returns the specified type.
     * @type {?HttpDataType}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    expectDataType?: HttpDataType;


    /**
     * default is true
     * @type {?boolean}
     * @syscap SystemCapability.Communication.NetStack
     * @since 9
     */
    /**
     * default is true
     * @type {?boolean}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * default is true
     * @type {?boolean}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    usingCache?: boolean;


    /**
     * HTTP request header. default is 'content-type': 'application/json'
     * @type {?Object}
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * HTTP request header. default is 'content-type': 'application/json'
     * @type {?Object}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * HTTP request header. default is 'content-type': 'application/json'
     * @type {?Object}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    header?: Object;


    /**
     * Read timeout period. The default value is 60,000, in ms.
     * @type {?number}
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * Read timeout period. The default value is 60,000, in ms.
     * @type {?number}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Read timeout period. The default value is 60,000, in ms.
     * @type {?number}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    readTimeout?: number;


    /**
     * Connection timeout interval. The default value is 60,000, in ms.
     * @type {?number}
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * Connection timeout interval. The default value is 60,000, in ms.
     * @type {?number}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Connection timeout interval. The default value is 60,000, in ms.
     * @type {?number}
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    connectTimeout?: number;
  }


  /**
   * <p>Defines an HTTP request task. Before invoking APIs provided by HttpRequest,
   * you must call createHttp() to create an HttpRequestTask object.</p>
   * @interface HttpRequest
   * @syscap SystemCapability.Communication.NetStack
   * @since 6
   */
  /**
   * <p>Defines an HTTP request task. Before invoking APIs provided by HttpRequest,
   * you must call createHttp() to create an HttpRequestTask object.</p>
   * @interface HttpRequest
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @since 10
   */
  /**
   * <p>Defines an HTTP request task. Before invoking APIs provided by HttpRequest,
   * you must call createHttp() to create an HttpRequestTask object.</p>
   * @interface HttpRequest
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @atomicservice
   * @since 11
   */
  export interface HttpRequest {


    /**
     * Initiates an HTTP request to a given URL, applicable to scenarios where http response supports streaming.
     * @permission ohos.permission.INTERNET
     * @param { string } url - URL for initiating an HTTP request.
     * @param { HttpRequestOptions } [options] - Optional parameters {@link HttpRequestOptions}.
     * @returns { Promise<number> } the promise returned by the function.
     * @throws { BusinessError } 401 - Parameter error.
     * @throws { BusinessError } 201 - Permission denied.
     * @throws { BusinessError } 2300001 - Unsupported protocol.
     * @throws { BusinessError } 2300003 - Invalid URL format or missing URL.
     * @throws { BusinessError } 2300005 - Failed to resolve the proxy name.
     * @throws { BusinessError } 2300006 - Failed to resolve the host name.
     * @throws { BusinessError } 2300007 - Failed to connect to the server.
     * @throws { BusinessError } 2300008 - Invalid server response.
     * @throws { BusinessError } 2300009 - Access to the remote resource denied.
     * @throws { BusinessError } 2300016 - Error in the HTTP2 framing layer.
     * @throws { BusinessError } 2300018 - Transferred a partial file.
     * @throws { BusinessError } 2300023 - Failed to write the received data to the disk or application.
     * @throws { BusinessError } 2300025 - Upload failed.
     * @throws { BusinessError } 2300026 - Failed to open or read local data from the file or application.
     * @throws { BusinessError } 2300027 - Out of memory.
     * @throws { BusinessError } 2300028 - Operation timeout.
     * @throws { BusinessError } 2300047 - The number of redirections reaches the maximum allowed.
     * @throws { BusinessError } 2300052 - The server returned nothing (no header or data).
     * @throws { BusinessError } 2300055 - Failed to send data to the peer.
     * @throws { BusinessError } 2300056 - Failed to receive data from the peer.
     * @throws { BusinessError } 2300058 - Local SSL certificate error.
     * @throws { BusinessError } 2300059 - The specified SSL cipher cannot be used.
     * @throws { BusinessError } 2300060 - Invalid SSL peer certificate or SSH remote key.
     * @throws { BusinessError } 2300061 - Invalid HTTP encoding format.
     * @throws { BusinessError } 2300063 - Maximum file size exceeded.
     * @throws { BusinessError } 2300070 - Remote disk full.
     * @throws { BusinessError } 2300073 - Remote file already exists.
     * @throws { BusinessError } 2300077 - The SSL CA certificate does not exist or is inaccessible.
     * @throws { BusinessError } 2300078 - Remote file not found.
     * @throws { BusinessError } 2300094 - Authentication error.
     * @throws { BusinessError } 2300999 - Internal error.
     * @syscap SystemCapability.Communication.NetStack
     * @since 10
     */
    /**
     * Initiates an HTTP request to a given URL, applicable to scenarios where http response supports streaming.
     * @permission ohos.permission.INTERNET
     * @param { string } url - URL for initiating an HTTP request.
     * @param { HttpRequestOptions } [options] - Optional parameters {@link HttpRequestOptions}.
     * @returns { Promise<number> } the promise returned by the function.
     * @throws { BusinessError } 401 - Parameter error.
     * @throws { BusinessError } 201 - Permission denied.
     * @throws { BusinessError } 2300001 - Unsupported protocol.
     * @throws { BusinessError } 2300003 - Invalid URL format or missing URL.
     * @throws { BusinessError } 2300005 - Failed to resolve the proxy name.
     * @throws { BusinessError } 2300006 - Failed to resolve the host name.
     * @throws { BusinessError } 2300007 - Failed to connect to the server.
     * @throws { BusinessError } 2300008 - Invalid server response.
     * @throws { BusinessError } 2300009 - Access to the remote resource denied.
     * @throws { BusinessError } 2300016 - Error in the HTTP2 framing layer.
     * @throws { BusinessError } 2300018 - Transferred a partial file.
     * @throws { BusinessError } 2300023 - Failed to write the received data to the disk or application.
     * @throws { BusinessError } 2300025 - Upload failed.
     * @throws { BusinessError } 2300026 - Failed to open or read local data from the file or application.
     * @throws { BusinessError } 2300027 - Out of memory.
     * @throws { BusinessError } 2300028 - Operation timeout.
     * @throws { BusinessError } 2300047 - The number of redirections reaches the maximum allowed.
     * @throws { BusinessError } 2300052 - The server returned nothing (no header or data).
     * @throws { BusinessError } 2300055 - Failed to send data to the peer.
     * @throws { BusinessError } 2300056 - Failed to receive data from the peer.
     * @throws { BusinessError } 2300058 - Local SSL certificate error.
     * @throws { BusinessError } 2300059 - The specified SSL cipher cannot be used.
     * @throws { BusinessError } 2300060 - Invalid SSL peer certificate or SSH remote key.
     * @throws { BusinessError } 2300061 - Invalid HTTP encoding format.
     * @throws { BusinessError } 2300063 - Maximum file size exceeded.
     * @throws { BusinessError } 2300070 - Remote disk full.
     * @throws { BusinessError } 2300073 - Remote file already exists.
     * @throws { BusinessError } 2300077 - The SSL CA certificate does not exist or is inaccessible.
     * @throws { BusinessError } 2300078 - Remote file not found.
     * @throws { BusinessError } 2300094 - Authentication error.
     * @throws { BusinessError } 2300998 - It is not allowed to access this domain.
     * @throws { BusinessError } 2300999 - Internal error.
     * @syscap SystemCapability.Communication.NetStack
     * @since 12
     */
    /**
     * Initiates an HTTP request to a given URL, applicable to scenarios where http response supports streaming.
     * @permission ohos.permission.INTERNET
     * @param { string } url - URL for initiating an HTTP request.
     * @param { HttpRequestOptions } [options] - Optional parameters {@link HttpRequestOptions}.
     * @returns { Promise<number> } the promise returned by the function.
     * @throws { BusinessError } 401 - Parameter error.
     * @throws { BusinessError } 201 - Permission denied.
     * @throws { BusinessError } 2300001 - Unsupported protocol.
     * @throws { BusinessError } 2300003 - Invalid URL format or missing URL.
     * @throws { BusinessError } 2300005 - Failed to resolve the proxy name.
     * @throws { BusinessError } 2300006 - Failed to resolve the host name.
     * @throws { BusinessError } 2300007 - Failed to connect to the server.
     * @throws { BusinessError } 2300008 - Invalid server response.
     * @throws { BusinessError } 2300009 - Access to the remote resource denied.
     * @throws { BusinessError } 2300016 - Error in the HTTP2 framing layer.
     * @throws { BusinessError } 2300018 - Transferred a partial file.
     * @throws { BusinessError } 2300023 - Failed to write the received data to the disk or application.
     * @throws { BusinessError } 2300025 - Upload failed.
     * @throws { BusinessError } 2300026 - Failed to open or read local data from the file or application.
     * @throws { BusinessError } 2300027 - Out of memory.
     * @throws { BusinessError } 2300028 - Operation timeout.
     * @throws { BusinessError } 2300047 - The number of redirections reaches the maximum allowed.
     * @throws { BusinessError } 2300052 - The server returned nothing (no header or data).
     * @throws { BusinessError } 2300055 - Failed to send data to the peer.
     * @throws { BusinessError } 2300056 - Failed to receive data from the peer.
     * @throws { BusinessError } 2300058 - Local SSL certificate error.
     * @throws { BusinessError } 2300059 - The specified SSL cipher cannot be used.
     * @throws { BusinessError } 2300060 - Invalid SSL peer certificate or SSH remote key.
     * @throws { BusinessError } 2300061 - Invalid HTTP encoding format.
     * @throws { BusinessError } 2300063 - Maximum file size exceeded.
     * @throws { BusinessError } 2300070 - Remote disk full.
     * @throws { BusinessError } 2300073 - Remote file already exists.
     * @throws { BusinessError } 2300077 - The SSL CA certificate does not exist or is inaccessible.
     * @throws { BusinessError } 2300078 - Remote file not found.
     * @throws { BusinessError } 2300094 - Authentication error.
     * @throws { BusinessError } 2300998 - It is not allowed to access this domain.
     * @throws { BusinessError } 2300999 - Internal error.
     * @syscap SystemCapability.Communication.NetStack
     * @atomicservice
     * @since 15
     */
    /**
     * Initiates an HTTP request to a given URL, applicable to scenarios where http response supports streaming.
     * @permission ohos.permission.INTERNET
     * @param { string } url - URL for initiating an HTTP request.
     * @param { HttpRequestOptions } [options] - Optional parameters {@link HttpRequestOptions}.
     * @returns { Promise<number> } the promise returned by the function.
     * @throws { BusinessError } 401 - Parameter error.
     * @throws { BusinessError } 201 - Permission denied.
     * @throws { BusinessError } 2300001 - Unsupported protocol.
     * @throws { BusinessError } 2300003 - Invalid URL format or missing URL.
     * @throws { BusinessError } 2300005 - Failed to resolve the proxy name.
     * @throws { BusinessError } 2300006 - Failed to resolve the host name.
     * @throws { BusinessError } 2300007 - Failed to connect to the server.
     * @throws { BusinessError } 2300008 - Invalid server response.
     * @throws { BusinessError } 2300009 - Access to the remote resource denied.
     * @throws { BusinessError } 2300016 - Error in the HTTP2 framing layer.
     * @throws { BusinessError } 2300018 - Transferred a partial file.
     * @throws { BusinessError } 2300023 - Failed to write the received data to the disk or application.
     * @throws { BusinessError } 2300025 - Upload failed.
     * @throws { BusinessError } 2300026 - Failed to open or read local data from the file or application.
     * @throws { BusinessError } 2300027 - Out of memory.
     * @throws { BusinessError } 2300028 - Operation timeout.
     * @throws { BusinessError } 2300047 - The number of redirections reaches the maximum allowed.
     * @throws { BusinessError } 2300052 - The server returned nothing (no header or data).
     * @throws { BusinessError } 2300055 - Failed to send data to the peer.
     * @throws { BusinessError } 2300056 - Failed to receive data from the peer.
     * @throws { BusinessError } 2300058 - Local SSL certificate error.
     * @throws { BusinessError } 2300059 - The specified SSL cipher cannot be used.
     * @throws { BusinessError } 2300060 - Invalid SSL peer certificate or SSH remote key.
     * @throws { BusinessError } 2300061 - Invalid HTTP encoding format.
     * @throws { BusinessError } 2300063 - Maximum file size exceeded.
     * @throws { BusinessError } 2300070 - Remote disk full.
     * @throws { BusinessError } 2300073 - Remote file already exists.
     * @throws { BusinessError } 2300077 - The SSL CA certificate does not exist or is inaccessible.
     * @throws { BusinessError } 2300078 - Remote file not found.
     * @throws { BusinessError } 2300094 - Authentication error.
     * @throws { BusinessError } 2300997 - Cleartext traffic not permitted.
     * @throws { BusinessError } 2300998 - It is not allowed to access this domain.
     * @throws { BusinessError } 2300999 - Internal error.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 18
     */
    requestInStream(url: string, options?: HttpRequestOptions): Promise<number>;


    /**
     * Destroys an HTTP request.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * Destroys an HTTP request.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Destroys an HTTP request.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    destroy(): void;


    /**
     * Registers an observer for HTTP Response Header events.
     * @param { "headersReceive" } type - Indicates Event name.
     * @param { Callback<Object> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @since 8
     */
    /**
     * Registers an observer for HTTP Response Header events.
     * @param { "headersReceive" } type - Indicates Event name.
     * @param { Callback<Object> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Registers an observer for HTTP Response Header events.
     * @param { "headersReceive" } type - Indicates Event name.
     * @param { Callback<Object> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    on(type: "headersReceive", callback: Callback<Object>): void;


    /**
     * Unregisters the observer for HTTP Response Header events.
     * @param { "headersReceive" } type - Indicates Event name.
     * @param { Callback<Object> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @since 8
     */
    /**
     * Unregisters the observer for HTTP Response Header events.
     * @param { "headersReceive" } type - Indicates Event name.
     * @param { Callback<Object> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * Unregisters the observer for HTTP Response Header events.
     * @param { "headersReceive" } type - Indicates Event name.
     * @param { Callback<Object> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    off(type: "headersReceive", callback?: Callback<Object>): void;


    /**
     * Registers an observer for receiving HTTP Response data events continuously.
     * @param { "dataReceive" } type - Indicates Event name.
     * @param { Callback<ArrayBuffer> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @since 10
     */
    /**
     * Registers an observer for receiving HTTP Response data events continuously.
     * @param { "dataReceive" } type - Indicates Event name.
     * @param { Callback<ArrayBuffer> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @atomicservice
     * @since 15
     */
    /**
     * Registers an observer for receiving HTTP Response data events continuously.
     * @param { "dataReceive" } type - Indicates Event name.
     * @param { Callback<ArrayBuffer> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 18
     */
    on(type: "dataReceive", callback: Callback<ArrayBuffer>): void;


    /**
     * Unregisters an observer for receiving HTTP Response data events continuously.
     * @param { "dataReceive" } type - Indicates Event name.
     * @param { Callback<ArrayBuffer> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @since 10
     */
    /**
     * Unregisters an observer for receiving HTTP Response data events continuously.
     * @param { "dataReceive" } type - Indicates Event name.
     * @param { Callback<ArrayBuffer> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @atomicservice
     * @since 15
     */
    /**
     * Unregisters an observer for receiving HTTP Response data events continuously.
     * @param { "dataReceive" } type - Indicates Event name.
     * @param { Callback<ArrayBuffer> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 18
     */
    off(type: "dataReceive", callback?: Callback<ArrayBuffer>): void;


    /**
     * Registers an observer for receiving HTTP Response data ends events.
     * @param { "dataEnd" } type - Indicates Event name.
     * @param { Callback<void> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @since 10
     */
    /**
     * Registers an observer for receiving HTTP Response data ends events.
     * @param { "dataEnd" } type - Indicates Event name.
     * @param { Callback<void> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @atomicservice
     * @since 15
     */
    /**
     * Registers an observer for receiving HTTP Response data ends events.
     * @param { "dataEnd" } type - Indicates Event name.
     * @param { Callback<void> } callback - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 18
     */
    on(type: "dataEnd", callback: Callback<void>): void;


    /**
     * Unregisters an observer for receiving HTTP Response data ends events.
     * @param { "dataEnd" } type - Indicates Event name.
     * @param { Callback<void> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @since 10
     */
    /**
     * Unregisters an observer for receiving HTTP Response data ends events.
     * @param { "dataEnd" } type - Indicates Event name.
     * @param { Callback<void> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @atomicservice
     * @since 15
     */
    /**
     * Unregisters an observer for receiving HTTP Response data ends events.
     * @param { "dataEnd" } type - Indicates Event name.
     * @param { Callback<void> } [callback] - the callback used to return the result.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 18
     */
    off(type: "dataEnd", callback?: Callback<void>): void;
  }


  /**
   * Defines an HTTP request method.
   * @enum {string}
   * @syscap SystemCapability.Communication.NetStack
   * @since 6
   */
  /**
   * Defines an HTTP request method.
   * @enum {string}
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @since 10
   */
  /**
   * Defines an HTTP request method.
   * @enum {string}
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @atomicservice
   * @since 11
   */
  export enum RequestMethod {

    /**
     * OPTIONS method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * OPTIONS method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * OPTIONS method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    OPTIONS = "OPTIONS",


    /**
     * GET method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * GET method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * GET method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    GET = "GET",


    /**
     * HEAD method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * HEAD method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * HEAD method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    HEAD = "HEAD",


    /**
     * POST method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * POST method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * POST method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    POST = "POST",


    /**
     * PUT method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * PUT method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * PUT method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    PUT = "PUT",


    /**
     * DELETE method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * DELETE method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * DELETE method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    DELETE = "DELETE",


    /**
     * TRACE method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * TRACE method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * TRACE method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    TRACE = "TRACE",


    /**
     * CONNECT method.
     * @syscap SystemCapability.Communication.NetStack
     * @since 6
     */
    /**
     * CONNECT method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * CONNECT method.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    CONNECT = "CONNECT"
  }


  /**
   * Indicates the type of the returned data.
   * @enum {number}
   * @syscap SystemCapability.Communication.NetStack
   * @since 9
   */
  /**
   * Indicates the type of the returned data.
   * @enum {number}
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @since 10
   */
  /**
   * Indicates the type of the returned data.
   * @enum {number}
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform
   * @atomicservice
   * @since 11
   */
  export enum HttpDataType {

    /**
     * The returned type is string.
     * @syscap SystemCapability.Communication.NetStack
     * @since 9
     */
    /**
     * The returned type is string.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * The returned type is string.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    STRING,


    /**
     * The returned type is Object.
     * @syscap SystemCapability.Communication.NetStack
     * @since 9
     */
    /**
     * The returned type is Object.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * The returned type is Object.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    OBJECT = 1,


    /**
     * The returned type is ArrayBuffer.
     * @syscap SystemCapability.Communication.NetStack
     * @since 9
     */
    /**
     * The returned type is ArrayBuffer.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @since 10
     */
    /**
     * The returned type is ArrayBuffer.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform
     * @atomicservice
     * @since 11
     */
    ARRAY_BUFFER = 2
  }
}

export default http;
