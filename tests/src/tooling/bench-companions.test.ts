import { describe, expect, it } from 'vitest';
import { FLOORS, PEER_PAIRINGS, shapeOf } from '../../../bench/companions.ts';

/**
 * What `npm run bench` pairs with what (bench/README.md, "Floors (issue #35)"): a floor's answer is
 * compared with Atrium's before it is measured, so the comparison must blank exactly what two
 * creates cannot share, and every scenario has at most one floor.
 */
describe('benchmark companions', () => {
  it("blanks a create's id and times, and nothing of a read", () => {
    const a = { object: 'organization', id: 'org_1', name: 'n', created_at: 't1', updated_at: 't1', domains: [] };
    const b = { ...a, id: 'org_2', created_at: 't2', updated_at: 't2' };
    expect(shapeOf(201, JSON.stringify(a))).toEqual(shapeOf(201, JSON.stringify(b)));
    expect(shapeOf(201, JSON.stringify(a))).not.toEqual(shapeOf(201, JSON.stringify({ ...b, name: 'other' })));
    // A read is compared whole: ids and times are the same row's.
    expect(shapeOf(200, JSON.stringify(a))).toEqual(a);
    expect(shapeOf(200, JSON.stringify(a))).not.toEqual(shapeOf(200, JSON.stringify(b)));
  });

  it('pairs each scenario with one floor at most, and gives the peer scenarios of issue #35 the REST floor', () => {
    const paired = FLOORS.flatMap((floor) => floor.pairings.map((p) => p.scenario));
    expect(new Set(paired).size).toBe(paired.length);
    const rest = FLOORS.find((floor) => floor.name === 'rest');
    expect(rest?.script).toBe('bench/floors/rest.ts');
    const peerTargets = PEER_PAIRINGS.filter((p) => p.target !== undefined).map((p) => p.scenario);
    expect(rest?.pairings.map((p) => p.scenario)).toEqual(peerTargets);
  });
});
