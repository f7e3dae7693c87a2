// Excerpt (declarations verbatim, the others left out) of interface_sdk-js api/@ohos.net.http.d.ts (7.0), written by tests/arkts/sdk-fixtures/extract.js.
import type { AsyncCallback, Callback } from './@ohos.base';
import type connection from './@ohos.net.connection';
import type cert from './@ohos.security.cert';


/**
 * The **http** module provides APIs for implementing HTTP data request capabilities. An application can initiate a data
 * request over HTTP. Common HTTP methods include **GET**, **POST**, **OPTIONS**, **HEAD**, **PUT**, **DELETE**,
 * **PATCH**, **TRACE**, and **CONNECT**.
 *
 * @syscap SystemCapability.Communication.NetStack
 * @crossplatform [since 10]
 * @atomicservice [since 11]
 * @since 6 dynamic
 * @since 23 static
 */
declare namespace http {


  /**
   * Creates an HTTP request. You can use this API to initiate or destroy an HTTP request, or enable or disable
   * listening for HTTP Response Header events. To initiate multiple HTTP requests, you must create an **HttpRequest**
   * object for each HTTP request. An **HttpRequest** object corresponds to an HTTP request.
   *
   * > **NOTE**
   * >
   * > When the request is no longer needed, call destroy() to release resources. Otherwise, memory leaks may occur.
   *
   * @returns { HttpRequest } An **HttpRequest** object, which contains the **request**, **requestInStream**,
   *     **requestSync**, **enableAutoCookie**, **destroy**, **on**, and **off** methods.
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform [since 10]
   * @atomicservice [since 11]
   * @since 6 dynamic
   * @since 23 static
   */
  function createHttp(): HttpRequest;


  /**
   * Defines the options for initiating an HTTP request.
   *
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform [since 10]
   * @atomicservice [since 11]
   * @since 6 dynamic
   * @since 23 static
   */
  export interface HttpRequestOptions {

    /**
     * Request method. The default value is **GET**.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    method?: RequestMethod;


    /**
     * Additional data for sending a request. This parameter is not used by default. Since API version 26, you are
     * advised to use the **body** and **queryParams** parameters preferentially.
     *
     * **Note**: Do not add this parameter if no extra data is available. If this parameter must be added, set it to
     * **undefined** or **null**. Do not pass the parameter as "".
     *
     * - If the HTTP request uses a POST, PUT, or DELETE method, this field serves as the content of the HTTP request
     * and is encoded in UTF-8 format.
     *
     * Example:
     *
     * (1) If **content-Type** is **application/x-www-form-urlencoded**, the data in the request body must be encoded in
     * the format of **key1=value1&key2=value2&key3=value3** after URL transcoding (**encodeURIComponent/encodeURI**)
     * and this field is usually in the String format.
     *
     * (2) If **content-Type** is **text/xml**, this field is usually in the String format.
     *
     * (3) If **content-Type** is **application/json**, this field is usually in the Object format.
     *
     * (4) If **content-Type** is **application/octet-stream**, this field is usually in the ArrayBuffer format.
     *
     * (5) If **content-Type** is **multipart/form-data** and the content to be uploaded is a file, this field is
     * usually in the ArrayBuffer format.
     *
     * The preceding information is for reference only and may vary according to the actual situation.
     *
     * - If the HTTP request uses the GET, OPTIONS, TRACE, or CONNECT method, this parameter serves as a supplement to
     * HTTP request parameters. Parameters of the string type need to be encoded before being passed to the HTTP
     * request. Parameters of the object type do not need to be precoded and will be directly concatenated to the URL.
     * Parameters of the ArrayBuffer type will not be concatenated to the URL.
     *
     * @type {?string | Object | ArrayBuffer} [since 6 - 10]
     * @type { ?(string | Object | ArrayBuffer) } [since 11]
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    extraData?: string | Object | ArrayBuffer;


    /**
     * Type of the returned data. This parameter is not used by default. If this parameter is set, the system returns
     * the specified type of data preferentially. If the specified type is **Object**, the value can contain a maximum
     * of 65536 characters.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 9 dynamic
     * @since 23 static
     */
    expectDataType?: HttpDataType;


    /**
     * Whether to use the cache. The value **true** indicates that the cache is preferentially read when a request is
     * initiated, and the value **false** indicates that the cache is not used. The default value is **true**. The cache
     * function takes effect when the process is started. The new cached data will replace the existing cached data.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 9 dynamic
     * @since 23 static
     */
    usingCache?: boolean;


    /**
     * HTTP request header. If the request method is POST, PUT, DELETE, or null, the default value is {'content-Type': '
     * application/json'}. Otherwise, the default value is {'content-Type': 'application/x-www-form-urlencoded'}.
     *
     * If the header contains fields of numeric type, the maximum value must be an int64 integer.
     *
     * The header field supports the JSON format (as shown in
     * [Example](docroot://reference/apis-network-kit/js-apis-http.md#example)) and the Record<string, string> format.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    header?: Object;


    /**
     * Read timeout duration. The default value is **60000**, in ms. The input value must be an uint32_t integer.
     *
     * The value **0** indicates no timeout.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    readTimeout?: int;


    /**
     * Connection timeout interval. The default value is **60000**, in ms. The input value must be an uint32_t integer.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    connectTimeout?: int;
  }


  /**
   * Defines an HTTP request task. Before invoking APIs provided by **HttpRequest**, you must call
   * [createHttp()]{@link http.createHttp} to create an **HttpRequestTask** object.
   *
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform [since 10]
   * @atomicservice [since 11]
   * @since 6 dynamic
   * @since 23 static
   */
  export interface HttpRequest {


    /**
     * Initiates an HTTP request containing specified options to a given URL. This API uses a promise to return the 
     * result, which is a streaming response.
     *
     * @permission ohos.permission.INTERNET
     * @param { string } url - URL for initiating an HTTP request.
     * @param { HttpRequestOptions } [options] - Request options. For details, see
     *     [HttpRequestOptions]{@link http.HttpRequestOptions}.
     * @returns { Promise<int> } Promise used to return the [result]{@link http.ResponseCode}.
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
     * @throws { BusinessError } 2300998 - It is not allowed to access this domain. [since 12]
     * @throws { BusinessError } 2300997 - Cleartext traffic not permitted. [since 18]
     * @throws { BusinessError } 2300996 - The request was intercepted by the HTTP global
     *     interceptor. [since 26.0.0]
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 18]
     * @atomicservice [since 15]
     * @since 10 dynamic
     */
    requestInStream(url: string, options?: HttpRequestOptions): Promise<int>;


    /**
     * Stops an HTTP request task and releases system resources.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    destroy(): void;


    /**
     * Registers an observer for HTTP Response Header events.
     *
     * @param { "headersReceive" } type - Event type. The value is **headersReceive**.
     * @param { Callback<Object> } callback - Callback used to return the HTTP response header.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 8 dynamic
     */
    on(type: "headersReceive", callback: Callback<Object>): void;


    /**
     * Unregisters the observer for HTTP Response Header events.
     *
     * @param { "headersReceive" } type - Event type. The value is **headersReceive**.
     * @param { Callback<Object> } callback - Callback used to return the result. You can pass the callback of the
     *     **on** function if you want to cancel listening for a certain type of events. If you do not pass the
     *     callback, you will cancel listening for all events. [since 8 - 10]
     * @param { Callback<Object> } [callback] - Callback used to return the result. You can pass the callback of the
     *     **on** function if you want to cancel listening for a certain type of events. If you do not pass the
     *     callback, you will cancel listening for all events. [since 11]
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 8 dynamic
     */
    off(type: "headersReceive", callback?: Callback<Object>): void;


    /**
     * Registers an observer for events indicating receiving of HTTP streaming responses.
     *
     * @param { "dataReceive" } type - Event type. The value is **dataReceive**.
     * @param { Callback<ArrayBuffer> } callback - Callback used to return the result. If the operation is successful,
     *     **error** is **undefined**, and **data** is the received HTTP streaming data of the ArrayBuffer type.
     *     Otherwise, **error** is an error object.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 18]
     * @atomicservice [since 15]
     * @since 10 dynamic
     */
    on(type: "dataReceive", callback: Callback<ArrayBuffer>): void;


    /**
     * Unregisters the observer for events indicating receiving of HTTP streaming responses.
     *
     * @param { "dataReceive" } type - Event type. The value is **dataReceive**.
     * @param { Callback<ArrayBuffer> } [callback] - Callback used to return the result. You can pass the callback of
     *     the **on** function if you want to cancel listening for a certain type of events. If you do not pass the
     *     callback, you will cancel listening for all events.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 18]
     * @atomicservice [since 15]
     * @since 10 dynamic
     */
    off(type: "dataReceive", callback?: Callback<ArrayBuffer>): void;


    /**
     * Registers an observer for events indicating completion of receiving HTTP streaming responses.
     *
     * @param { "dataEnd" } type - Event type. The value is **dataEnd**.
     * @param { Callback<void> } callback - Callback used to return the result. If the operation is successful, **err**
     *     is **undefined**; otherwise, **err** is an **Error** object.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 18]
     * @atomicservice [since 15]
     * @since 10 dynamic
     */
    on(type: "dataEnd", callback: Callback<void>): void;


    /**
     * Unregisters the observer for events indicating completion of receiving HTTP streaming responses.
     *
     * @param { "dataEnd" } type - Event type. The value is **dataEnd**.
     * @param { Callback<void> } [callback] - Callback used to return the result. You can pass the callback of the
     *     **on** function if you want to cancel listening for a certain type of events. If you do not pass the
     *     callback, you will cancel listening for all events.
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 18]
     * @atomicservice [since 15]
     * @since 10 dynamic
     */
    off(type: "dataEnd", callback?: Callback<void>): void;
  }


  /**
   * Defines an HTTP request method.
   *
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform [since 10]
   * @atomicservice [since 11]
   * @since 6 dynamic
   * @since 23 static
   */
  export enum RequestMethod {

    /**
     * Describes the communication options of the target resource.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    OPTIONS = "OPTIONS",


    /**
     * Requests the representation of the specified resource. The GET request should only retrieve data and should not
     * contain the request content.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    GET = "GET",


    /**
     * Requests the same response (but does not have a response body) as the GET request.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    HEAD = "HEAD",


    /**
     * Submits an entity to a specified resource, which usually causes a status change on the server.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    POST = "POST",


    /**
     * Replaces all current representations of the target resource with the requested content.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    PUT = "PUT",


    /**
     * Deletes the specified resource.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    DELETE = "DELETE",


    /**
     * Performs a message loopback test along the path to the target resource.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    TRACE = "TRACE",


    /**
     * Establishes a tunnel to the server identified by the target resource.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 6 dynamic
     * @since 23 static
     */
    CONNECT = "CONNECT",


    /**
     * Modifies a resource partially.
     *
     * **Since**: 26.0.0
     *
     * @syscap SystemCapability.Communication.NetStack
     * @stagemodelonly
     * @crossplatform
     * @since 26.0.0 dynamic
     */
    PATCH = "PATCH"
  }


  /**
   * Enumerates HTTP data types.
   *
   * | Name| Value| Description    |
   * | ------------------  | -- | ----------- |
   * | STRING              | 0 | String type.|
   * | OBJECT              | 1 | Object type.   |
   * | ARRAY_BUFFER        | 2 | Binary array type.|
   *
   * @syscap SystemCapability.Communication.NetStack
   * @crossplatform [since 10]
   * @atomicservice [since 11]
   * @since 9 dynamic
   * @since 23 static
   */
  export enum HttpDataType {

    /**
     * The returned type is string.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 9 dynamic
     * @since 23 static
     */
    STRING = 0,


    /**
     * The returned type is Object.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 9 dynamic
     * @since 23 static
     */
    OBJECT = 1,


    /**
     * The returned type is ArrayBuffer.
     *
     * @syscap SystemCapability.Communication.NetStack
     * @crossplatform [since 10]
     * @atomicservice [since 11]
     * @since 9 dynamic
     * @since 23 static
     */
    ARRAY_BUFFER = 2
  }
}

export default http;
