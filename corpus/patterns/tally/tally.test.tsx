/**
 * Checks the tally: the default start, both directions, and a custom step.
 * A test program; indexers must not report it as an entry.
 */
import { action, assert, pattern, TESTS } from "commonfabric";
import Tally from "./tally.tsx";

export default pattern(() => {
  const plain = Tally({});
  const byFives = Tally({ value: 10, step: 5 });

  const upTwice = action(() => {
    plain.increment.send();
    plain.increment.send();
  });
  const downOnce = action(() => plain.decrement.send());
  const fiveDown = action(() => byFives.decrement.send());

  const startsAtZero = assert(() => plain.value === 0);
  const reachedTwo = assert(() => plain.value === 2);
  const backToOne = assert(() => plain.value === 1);
  const steppedToFive = assert(() => byFives.value === 5);

  return {
    [TESTS]: [
      { assertion: startsAtZero },
      { action: upTwice },
      { assertion: reachedTwo },
      { action: downOnce },
      { assertion: backToOne },
      { action: fiveDown },
      { assertion: steppedToFive },
    ],
  };
});
