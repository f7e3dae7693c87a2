// Build script of the HAR module. harTasks is hvigor's built-in HAR build; it packs Index.ets,
// src/main and the prebuilt libs/arm64-v8a/libarkagent.so (see scripts/build-ohos.sh).
import { harTasks } from '@ohos/hvigor-ohos-plugin';

export default {
  system: harTasks,  /* Built-in plugin of Hvigor. It cannot be modified. */
  plugins: []        /* Custom plugin to extend the functionality of Hvigor. */
}
