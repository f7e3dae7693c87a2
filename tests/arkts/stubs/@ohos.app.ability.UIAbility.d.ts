/*
 * Minimal stub of @ohos.app.ability.UIAbility (@kit.AbilityKit): the lifecycle callback the example app's EntryAbility overrides.
 *
 * Source: interface_sdk-js api/@ohos.app.ability.UIAbility.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import Ability from './@ohos.app.ability.Ability';
import window from './@ohos.window';

export default class UIAbility extends Ability {
  onWindowStageCreate(windowStage: window.WindowStage): void;
  onWindowStageDestroy(): void;
}
