// Excerpt (declarations verbatim, the others left out) of interface_sdk-js api/@internal/ets/global.d.ts (7.0), written by tests/arkts/sdk-fixtures/extract.js.
/**
 * Sets a timer for the system to call a function after the timer goes off.
 * The timer is automatically deleted after callback execution, or you may manually delete it via the **clearTimeout()**
 * API.
 *
 * @param { Function | string } handler - When the type is function, this parameter specifies the callback function to
 *     be invoked upon the timer's expiration. <br>When the type is string, error information is printed with no
 *     additional processing.
 * @param { number } [delay] - Number of milliseconds delayed before the execution. It is recommended that an integer be
 *     passed in; a decimal will be rounded down.<br>If this parameter is omitted, the default value of **0** is used.<
 *     br>**NOTE**<br>1. This timer is not a precise timer, and there may be a discrepancy between the actual delay and
 *     the expected delay.<br>2. If the value is less than 1, it will be defaulted to **0**.<br>3. The value is subject
 *     to system limitations. If it exceeds 2^31 �C 1, the value will be **0**.
 * @param { any[] } arguments - Additional parameters that are passed to **handler** only when **handler** is of the
 *     function type.<br>If the number of arguments is less than that of the **handler** function parameters, the
 *     parameters that are not overwritten by arguments are set to **undefined**.<br>If the number of arguments exceeds
 *     that of the **handler** function parameters, the excess arguments will be ignored. However, they can still be
 *     accessed via the built-in arguments object within the **handler** function. [since 7 - 10]
 * @param { any[] } [arguments] - Additional parameters that are passed to **handler** only when **handler** is of the
 *     function type.<br>If the number of arguments is less than that of the **handler** function parameters, the
 *     parameters that are not overwritten by arguments are set to **undefined**.<br>If the number of arguments exceeds
 *     that of the **handler** function parameters, the excess arguments will be ignored. However, they can still be
 *     accessed via the built-in arguments object within the **handler** function. [since 10]
 * @returns { number } ID of the timer. The timer ID is shared by processes and is an integer starting from 0 in
 *     ascending order.
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @crossplatform [since 10]
 * @atomicservice [since 11]
 * @since 7 dynamic
 */
export declare function setTimeout(handler: Function | string, delay?: number, ...arguments: any[]): number;
/**
 * Cancels a timer set via **setTimeout()**.
 * The timer object is stored in the thread where the timer is created and must be deleted in that thread.
 *
 * @param { number } [timeoutID] - The ID of the timer to be canceled, which must be the same as the return value of
 *     **setTimeout()**. If this parameter is omitted or the specified timer ID does not exist, no timer will be
 *     canceled.
 * @syscap SystemCapability.ArkUI.ArkUI.Full
 * @crossplatform [since 10]
 * @atomicservice [since 11]
 * @since 7 dynamic
 */
export declare function clearTimeout(timeoutID?: number): void;
