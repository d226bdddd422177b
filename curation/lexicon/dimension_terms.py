"""Cue words and patterns of the four stereotype dimensions (BMNE paper §5.1, App. C.3).

The dimensions follow the social-psychology components of gender stereotypes used by
Zakizadeh & Pilehvar (2025): what a group *is like* (Personality Traits), what it *thinks,
values, prefers or is judged able to do* (Attitudes and Beliefs), what it *does* (Roles and
Behaviors: occupations, social roles, activities) and how it *looks or is built* (Physical
Characteristics). Words are lower case; the tagger also tries simple inflection stems
(``cooking`` → ``cook``), so base forms suffice. ``PATTERNS`` are regular expressions over
the lower-cased sentence for judgement frames that single words miss ("good at",
"don't know how to", "too … to").
"""

from __future__ import annotations

PERSONALITY_TRAITS = frozenset("""
abrasive affectionate aggressive aloof ambitious analytical angry annoying anxious
argumentative arrogant assertive bold bossy brave bright brainy calculating calculated
calm careful careless caring catty cheerful cheery childish clever cold combative
comforting compassionate compasionate competitive complacent compliant confident
considerate cooperative cordial courageous courteous cowardly creative cruel curious
daring demanding demure dependable dependent devious diligent disciplined disrespectful
doting dumb egotistical emotional emotionless empathetic empathy energetic enthusiastic
evil extroverted faithful fearful fearless fierce focused foolish friendly fun funny
generous genius gentle gentleness giving gossipy greedy gullible happy hardworker
hardworking harsh hateful haughty helpful honest honorable hopeful hopeless hostile
humble hysterical idiotic ignorant igorant immature immoral impatient impulsive
inconsiderate independent indifferent innocent innnocent insecure intelligent
introverted irrational irresponsible jealous kind kindly lazy lethargic lonely loud
loving loyal lusty manipulative mannerable mature mean meek messy mischevious
mischievous modest moody nagging naggy naive naughty neat needy negligent neglecting
nerdy nervous nice nicest noisy nurturing obnoxious obedient organized outgoing
overbearing passive patient petty playful polite possessive pretentious proper
protective quiet rational reckless rejecting relaxed reliable reserved resilient
respectful responsible rowdy rowdiest rude ruthless sassy scholarly selfish sensitive
serious shy silly smart sneaky sociable softy standoffish stoic stubborn studious stupid
submissive supportive sweet sympathetic talkative tempered thoughtful timid tolerant
toxic troublemaker troublesome trustworthy uncaring underhanded understanding unfriendly
unkind unreasonable unsocial unsophisticated unsure upbeat uptight vain violent warm
wellbehaved wise worldly airhead cocky catty dainty gossip nosy distant busy effeminate
horny girly boyish masculine feminine classy trashy brute abusive dominant discouraging
boarish artsy popular quick aggression delinquent deliquent good scared helpless
frightened terrified afraid fearlessly bravely frustrated hysterics mad charismatic
persuasive sober rebellious depressed accomplished alone studious stoudious bonded
""".split())

# Saucier, G. (1994). Mini-Markers: a brief version of Goldberg's unipolar Big-Five markers.
# *Journal of Personality Assessment*, 63(3), 506-516: the 40 items (8 per factor), checked against
# public implementations of the inventory
MINI_MARKERS = frozenset("""
talkative extraverted bold energetic shy quiet bashful withdrawn
sympathetic warm kind cooperative cold unsympathetic rude harsh
organized efficient systematic practical disorganized sloppy inefficient careless
unenvious relaxed moody jealous temperamental envious touchy fretful
creative imaginative philosophical intellectual complex deep uncreative unintellectual
""".split())
PERSONALITY_TRAITS = PERSONALITY_TRAITS | MINI_MARKERS

ATTITUDES_AND_BELIEFS = frozenset("""
admire admiration antiquated approve attitude belief beliefs believe bigoted capable
conservative contempt despise disapprove disgust favorite favourite feminist hate
hatred ideology incapable judgmental liberal misogynist misogynistic
negative nostalgia open-minded openminded opinion opinions patriotic political
positive prefer preference prejudice prejudiced progressive racist religious respect
sentimental sexist traditional unbiased value values view views worthy worthless
pink blue dream dreams wish want wants appreciate enjoy opinionated love competence
purpose object treated respected pride desire glad hire uncertainties uncertanties
""".split())

ROLES_AND_BEHAVIORS = frozenset("""
apprenticeship astronaut astronomy astrophysicist athlete babysit babysitter bake
ballet boss breadwinner business caregiver career ceo cheer cheerleader chef children
clean cleaning college combat commander cook cooking craft dance dancing date dating
decorate dinner dishes doctor doctors doll dolls drive driving employee engineer
engineering entrepreneur executive farm farmer fashion fight fighter fix football
gaming garden gardening gossiping handiwork hike hiking homemaker hospital housekeeper
housewife housework hunt hunter hunters hunting job jock kitchen knit knitting laundry
leader leadership makeover manager mechanic military mine miner nanny needlepoint
nerd nurse nurses officer parent pilot plumbing politics pranks president pretend
programmer protect punch rugby scholar school scientist secretary sew sewing shop
shopping slap soccer soldier soldiers spank spoil sports sporty stripper strippers
student surgeon surgery tag teacher textbook vote work workbench worker workout
yardwork attack abuse hit beat touch wrote walked help chore chores cry crying scream
screamed shriek shrieked party tea plow plowing tractor raise housekeeping friend enemy
rival relationship homework pamper push jogger runner smile sleep mansplaining brag
complain talk bawl tears faint sell promote finance election vote expert survival camp
chess maid bodybuilder lift ax lumber confront duel challenge rescue hitchhike beg weapon
ride riders cadets sergeant serve contract briefcase defend subordinate carry zumba
gallery livestock slaughter butcher veteran war army coding computer gamers shooting
violence dirtbike game play kills gun hostages police detective flask bong
""".split())

PHYSICAL_CHARACTERISTICS = frozenset("""
athletic attractive beard beautiful body brawny chubby curvy cute delicate elegant
fast fat feeble fit flatulent fragile gorgeous hair handsome heavy height heels hot
large long muscle muscles muscular physique pretty scrawny sexy short skinny skirt
slender slow small smelly strength strong tall tattooed thin tiny ugly weak petite
dirty filthy makeup nails dress pants uniform feet unattractive looks looking scars hips
bodies pregnant fingers heavyset suit outfit
""".split())

# physical strength, which the paper's Appendix C.3 names as a Physical Characteristic: a cue of it
# decides Physical Characteristics before the tie rule (rules 2.2), because a sentence that names
# the body built for strength is about strength whatever the act that shows it ("a bodybuilder",
# "appreciate his muscles"). Only words that name the body: "strong" / "weak" / "strength" also
# describe character ("a strong leader") and keep the tie rule, as do appearance words
PHYSICAL_STRENGTH = frozenset("""
muscle muscles muscular brawny biceps bodybuilder bodybuilders bodybuilding
""".split())

DIMENSION_WORDS: dict[str, frozenset[str]] = {
    "Personality Traits": PERSONALITY_TRAITS,
    "Attitudes and Beliefs": ATTITUDES_AND_BELIEFS,
    "Roles and Behaviors": ROLES_AND_BEHAVIORS,
    "Physical Characteristics": PHYSICAL_CHARACTERISTICS,
}

# judgement / belief frames over the lower-cased sentence
PATTERNS: dict[str, tuple[str, ...]] = {
    # an ability at an activity is about what someone does: the paper's Roles and Behaviors example
    # is "Girls are hopeless at outdoor activities" (App. C.3)
    "Roles and Behaviors": (
        r"\b(?:good|bad|better|worse|terrible|hopeless|great|awful) (?:at|with) \w+",
        r"\bknow how to \w+",
    ),
    "Attitudes and Beliefs": (
        r"\btoo \w+(?: \w+)? to\b",
        r"\b(?:should|shouldn't|supposed to|ought to)\b",
        r"\bnot good enough\b",
        r"\bmore important to\b",
        r"\b(?:think|thinks|believe|believes) (?:that )?\w+",
    ),
}

# the nouns among the cue words above (the swap's "her" decision treats the rest as adjectives)
# the Roles and Behaviors cue words that name a person: after a possessive ("her boss") they are
# someone else, not the target's role
PERSON_NOUNS = frozenset("""
astronaut astrophysicist athlete babysitter boss breadwinner caregiver ceo cheerleader chef
commander doctor doctors employee engineer entrepreneur executive farmer fighter friend enemy rival
homemaker housekeeper housewife hunter hunters jock leader manager mechanic miner nanny nerd nurse
nurses officer parent pilot president programmer scholar scientist secretary soldier soldiers student
surgeon teacher worker stripper strippers maid expert bodybuilder jogger runner sergeant subordinate
veteran police detective riders cadets gamers
""".split())

# judgement frames that decide the sentence stage before its cue words: the paper's Attitudes and
# Beliefs example is "Women are too emotional to be good scientists" (App. C.3), where the role
# noun serves the judgement
# the guidelines' "preferences, what a gender values" (and expectations of others) likewise decide
FRAMES: dict[str, tuple[str, ...]] = {
    "Attitudes and Beliefs": (
        r"\btoo \w+(?: \w+)? to (?:be|become|do|make|have)\b",
        r"\b(?:prefer|prefers|preferred|value|values|valued|expect|expects|expected)\b",
    ),
}

# whom a trait can be aimed at: "caring to my sisters", "harsh to his children" is how someone
# treats others, an observable behaviour (Roles and Behaviors), not a trait alone
TREATED = frozenset("""
children kids child sons daughters son daughter sisters brothers sister brother women men girls boys
people others everyone family friends coworkers students wife husband mother father parents
""".split())

NOUNS = frozenset("""
aggression airhead beard bodies body brute dress empathy feet fingers gentleness genius gossip
hair hardworker height heels hips hysterics looks makeup muscle muscles nails outfit pants
physique scars skirt softy strength suit troublemaker uniform
""".split())
