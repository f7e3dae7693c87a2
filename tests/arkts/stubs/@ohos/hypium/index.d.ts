/*
 * Minimal stub of the @ohos/hypium index.d.ts: the suite/case functions, hooks, the Assert
 * matcher interface and the case attribute enums; only what ohosTest uses is kept.
 *
 * Source: ohpm @ohos/hypium 1.0.24 (index.d.ts; the package's source is
 *   testfwk_arkxtest jsunit). Not part of interface_sdk-js, so check-stubs.js compares
 *   only its header; ohos/oh-package.json5 pins the same version.
 */

export declare const DEFAULT: number;

export declare enum TestType {
  FUNCTION = 0B1,
  PERFORMANCE = 0B1 << 1,
  POWER = 0B1 << 2,
  RELIABILITY = 0B1 << 3,
  SECURITY = 0B1 << 4,
  GLOBAL = 0B1 << 5,
  COMPATIBILITY = 0B1 << 6,
  USER = 0B1 << 7,
  STANDARD = 0B1 << 8,
  SAFETY = 0B1 << 9,
  RESILIENCE = 0B1 << 10
}

export declare enum Size {
  SMALLTEST = 0B1 << 16,
  MEDIUMTEST = 0B1 << 17,
  LARGETEST = 0B1 << 18
}

export declare enum Level {
  LEVEL0 = 0B1 << 24,
  LEVEL1 = 0B1 << 25,
  LEVEL2 = 0B1 << 26,
  LEVEL3 = 0B1 << 27,
  LEVEL4 = 0B1 << 28
}

export declare function describe(testSuiteName: string, callback: Function): void;

export declare function beforeItSpecified(testCaseNames: Array<string> | string, callback: Function): void;

export declare function afterItSpecified(testCaseNames: Array<string> | string, callback: Function): void;

export declare function beforeEach(callback: Function): void;

export declare function afterEach(callback: Function): void;

export declare function beforeAll(callback: Function): void;

export declare function afterAll(callback: Function): void;

export declare function it(testCaseName: string, attribute: TestType | Size | Level, callback: Function): void;

export interface Assert {
  assertClose(expectValue: number, precision: number): void;
  assertContain(expectValue: any): void;
  assertEqual(expectValue: any): void;
  assertFail(): void;
  assertFalse(): void;
  assertTrue(): void;
  assertInstanceOf(expectValue: string): void;
  assertLarger(expectValue: number): void;
  assertLess(expectValue: number): void;
  assertNull(): void;
  assertThrowError(expectValue: string | Function): void;
  assertUndefined(): void;
  assertLargerOrEqual(expectValue: number): void;
  assertLessOrEqual(expectValue: number): void;
  assertNaN(): void;
  assertNegUnlimited(): void;
  assertPosUnlimited(): void;
  not(): Assert;
  assertDeepEquals(expectValue: any): void;
  assertPromiseIsPending(): Promise<void>;
  assertPromiseIsRejected(): Promise<void>;
  assertPromiseIsRejectedWith(expectValue?: any): Promise<void>;
  assertPromiseIsRejectedWithError(...expectValue: any[]): Promise<void>;
  assertPromiseIsResolved(): Promise<void>;
  assertPromiseIsResolvedWith(expectValue?: any): Promise<void>;
}

export declare function expect(actualValue?: any): Assert;
