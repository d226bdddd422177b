"""Given names, by the gender they are usually read as (lower case).

Names are never swapped (a name carries more than gender: age, ethnicity, class), but the
curation needs to *recognise* them: a CrowS-Pairs pair that differs by ``Melissa``/``Josh``
is a gender perturbation, a sentence whose only gender marker is a name cannot be swapped,
and ``Jason decorated her new home`` is inconsistent. Names read as either gender are in
``UNISEX`` (recognised as names, no gender). The lists cover the names in the gender items
of StereoSet and CrowS-Pairs plus common US first names; an unlisted capitalised word
inside a sentence is treated as a possible name by :mod:`stereoset_eval.curation.spans`.
"""

from __future__ import annotations

FEMALE_NAMES: frozenset[str] = frozenset("""
abigail alice alicia amanda amber amy ana andrea angela anna anne ashley barbara beth
betty brenda brittany candace candice carol caroline carrie catherine cathy celia
charlene charlotte cheryl christina christine cynthia dana deborah debra denise diana
diane donna doris dorothy elizabeth ellen emily emma erin eva evelyn gloria grace greta
hannah heather helen irene jane janet jasmine jean jenna jennifer jenny jessica jill joan
joanna josephine joyce judith judy julia julie juliette karen kassandra kassidy kate
katherine kathleen kathy kayla kelly kim kimberly kristen kristy lara laura lauren lena
linda lisa liz lucy lynn madison maggie margaret maria marie marilyn martha mary maya
megan melissa michelle missy molly monica nancy naomi natalie nicole olivia pamela paula
priya rachel rebecca rose ruth sally samantha sandra sara sarah sharon shelby shelly
shirley sophia stephanie sue susan susie tammy teresa tiffany veronica victoria virginia
wendy
""".split())

MALE_NAMES: frozenset[str] = frozenset("""
aaron adam alan albert alexander andrew anthony arthur austin ben benjamin bill billy
bob bobby brad brandon brian bruce carl charles chris christopher craig daniel david
dennis donald douglas dylan earl ed edward eric frank fred gary george gerald greg
gregory harold harry henry jack jacob jake james jason jeff jeffrey jeremy jerry jim
jimmy joe john johnny jonathan jose josh joshua juan julius justin keith kenneth kenny
kevin kyle lars larry laquan louis mack mark martin marty mathew matt matthew michael
mike nathan nicholas patrick paul peter philip ralph randy raymond richard robert roger
ron ronald russell ryan scott sean shane shawn silas stephen steve steven stewart
thomas tim timmy timothy todd tom tommy tony tyler victor walter wayne wesley william
willie
""".split())

# names read as either gender (recognised as names, no gender inferred)
UNISEX_NAMES: frozenset[str] = frozenset("""
alex ashton casey denny drew jamie jordan kelsey morgan pat precious riley ronnie sam
shannon taylor terry
""".split())
