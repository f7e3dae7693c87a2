// Excerpt (the imports named, their exports) of interface_sdk-js kits/@kit.BasicServicesKit.d.ts (7.0), written by tests/arkts/sdk-fixtures/extract.js.
import { AsyncCallback, BusinessError, Callback, ErrorCallback } from '@ohos.base';
import { Available, SuppressWarnings, SuppressWarningsType } from '@ohos.annotation';
export {
  AsyncCallback, BusinessError, Callback, ErrorCallback, Available, SuppressWarnings, SuppressWarningsType
};
