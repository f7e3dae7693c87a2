// Excerpt (declarations verbatim, the others left out) of interface_sdk-js api/@internal/ets/global.d.ts (6.0), written by tests/arkts/sdk-fixtures/extract.js.
/**
 * Sets a timer after which a function will be executed.
 *
 * @param { Function | string } handler - Indicates the function to be called after the timer goes off.
 * For devices of "tv", "phone, tablet", and "wearable" types, this parameter can be a function or string.
 * For devices of "lite wearable" and "smartVision" types, this parameter must be a function.
 * @param { number } [delay] - Indicates the delay (in milliseconds) after which the function will be called.
 * If this parameter is left empty, default value "0" will be used, which means that the function will be called immediately or as soon as possible.
 * @param { any[] } arguments - Indicates additional arguments to pass to "handler" when the timer goes off.
 * @returns { number } Returns the timer ID.
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @since 7
 */
/**
 * Sets a timer after which a function will be executed.
 *
 * @param { Function | string } handler - Indicates the function to be called after the timer goes off.
 * For devices of "tv", "phone, tablet", and "wearable" types, this parameter can be a function or string.
 * For devices of "lite wearable" and "smartVision" types, this parameter must be a function.
 * @param { number } [delay] - Indicates the delay (in milliseconds) after which the function will be called.
 * If this parameter is left empty, default value "0" will be used, which means that the function will be called immediately or as soon as possible.
 * @param { any[] } [arguments] - Indicates additional arguments to pass to "handler" when the timer goes off.
 * @returns { number } Returns the timer ID.
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @crossplatform
 * @since 10
 */
/**
 * Sets a timer for the system to call a function after the timer goes off.
 * The timer is automatically deleted after the callback is executed, and can be manually deleted by calling the clearTimeout API.
 *
 * @param { Function | string } handler - Function to be called after the timer goes off. If the type is string, error information is printed and no other processing is performed.
 * For devices of "tv", "phone, tablet", and "wearable" types, this parameter can be a function or string.
 * For devices of "lite wearable" and "smartVision" types, this parameter must be a function.
 * @param { number } [delay] - Number of milliseconds delayed before the execution. It is recommended that an integer be passed in. A decimal will be rounded down.
 * If this parameter is not specified, the default value 0 is used, indicating that the function is executed immediately (in the next event loop).
 * NOTE
 * 1. In either case, the actual delay may be longer than expected.
 * 2. If a value less than 1 is passed, the default value 0 is used.
 * @param { any[] } [arguments] - Additional parameters to pass to the handler after the timer goes off.
 * @returns { number } ID of the timer. The timer ID is shared by processes and is an integer starting from 0 in ascending order.
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @crossplatform
 * @atomicservice
 * @since 11
 */
export declare function setTimeout(handler: Function | string, delay?: number, ...arguments: any[]): number;
/**
 * Cancel the timer set by "setTimeout()".
 *
 * @param { number } [timeoutID] - Indicates the timer ID returned by "setTimeout()".
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @since 7
 */
/**
 * Cancel the timer set by "setTimeout()".
 *
 * @param { number } [timeoutID] - Indicates the timer ID returned by "setTimeout()".
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @crossplatform
 * @since 10
 */
/**
 * Cancels a timer set via setTimeout().
 * The timer object is stored in the thread that creates the timer and must be deleted in that thread.
 *
 * @param { number } [timeoutID] - ID of the timer to cancel, which is returned by setTimeout() If this parameter is omitted, no timer is canceled.
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @crossplatform
 * @atomicservice
 * @since 11
 */
export declare function clearTimeout(timeoutID?: number): void;
