import { areaLoops, nodeOf } from '../../scripts/lib/areaGraph';

describe('the area-level import graph (check:cycles)', () => {
  it('folds an area folder into one node and keeps other files as they are', () => {
    expect(nodeOf('src/services/credits/moveCredits.ts')).toBe('services/credits');
    expect(nodeOf('src/services/kept.ts')).toBe('src/services/kept.ts');
    expect(nodeOf('src/api/routes/credits.ts')).toBe('src/api/routes/credits.ts');
  });

  it('finds a loop between areas that no file-level cycle closes (the credits loop issue 67 found)', () => {
    const imports = {
      'src/services/credits/moveCredits.ts': ['src/services/participants/index.ts'],
      'src/services/participants/index.ts': ['src/services/participants/onboarding.ts'],
      'src/services/participants/onboarding.ts': ['src/services/templates/index.ts'],
      'src/services/templates/index.ts': ['src/services/books/index.ts'],
      'src/services/books/funding.ts': ['src/services/credits/idempotency.ts'],
      'src/services/credits/idempotency.ts': [],
      'src/services/books/index.ts': [],
    };
    const loops = areaLoops(imports);
    expect(loops).toHaveLength(1);
    expect(loops[0].nodes).toEqual(['services/books', 'services/credits', 'services/participants', 'services/templates']);
    expect(loops[0].edges).toContain('services/books -> services/credits: src/services/books/funding.ts -> src/services/credits/idempotency.ts');
  });

  it('sees no loop once the shared helper lives in a leaf area', () => {
    const imports = {
      'src/services/credits/moveCredits.ts': ['src/services/participants/index.ts', 'src/services/idempotency/index.ts'],
      'src/services/participants/index.ts': ['src/services/templates/index.ts'],
      'src/services/templates/index.ts': ['src/services/books/index.ts'],
      'src/services/books/funding.ts': ['src/services/idempotency/index.ts'],
    };
    expect(areaLoops(imports)).toEqual([]);
  });
});
